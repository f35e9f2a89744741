/* kernel_nb_lru.c - the kernel-nb peer's model of what struct page holds
 * for reclaim: each page on its node's active or inactive list (real lists
 * in LRU order, linked through the next/prev arrays), PG_referenced, and
 * the young bit its PTE carries until folio_referenced() clears it.
 */
#include "core/policies/kernel_nb_impl.h"

static struct knb_list *page_list(struct knb *k, uint64_t p)
{
	return &k->node[k->lru_node[p]].lru[k->flags[p] & PG_ACTIVE ? 1 : 0];
}

void tier__knb_lru_del(struct knb *k, uint64_t p)
{
	struct knb_list *l;

	if (!(k->flags[p] & PG_ONLRU))
		return;
	l = page_list(k, p);
	if (k->prev[p] != KNB_NIL)
		k->next[k->prev[p]] = k->next[p];
	else
		l->head = k->next[p];
	if (k->next[p] != KNB_NIL)
		k->prev[k->next[p]] = k->prev[p];
	else
		l->tail = k->prev[p];
	l->nr--;
	k->flags[p] &= (uint8_t)~PG_ONLRU;
}

void tier__knb_lru_add(struct knb *k, uint64_t p, int node, bool active)
{
	struct knb_list *l;

	tier__knb_lru_del(k, p);
	k->lru_node[p] = (uint8_t)node;
	if (active)
		k->flags[p] |= PG_ACTIVE;
	else
		k->flags[p] &= (uint8_t)~PG_ACTIVE;
	l = page_list(k, p);
	k->prev[p] = KNB_NIL;
	k->next[p] = l->head;
	if (l->head != KNB_NIL)
		k->prev[l->head] = (uint32_t)p;
	else
		l->tail = (uint32_t)p;
	l->head = (uint32_t)p;
	l->nr++;
	k->flags[p] |= PG_ONLRU;
}

void tier__knb_lru_sync(struct knb *k, uint64_t p)
{
	uint8_t n = k->env->page_node[p];

	if (n == TIER_NODE_NONE) {
		tier__knb_lru_del(k, p);
		return;
	}
	if ((k->flags[p] & PG_ONLRU) && k->lru_node[p] == n)
		return;
	tier__knb_lru_add(k, p, n, k->flags[p] & PG_ACTIVE);
}

void tier__knb_mark_page_accessed(struct knb *k, uint64_t p)
{
	if (!(k->flags[p] & PG_REFERENCED)) {
		k->flags[p] |= PG_REFERENCED;
	} else if (!(k->flags[p] & PG_ACTIVE)) {
		tier__knb_lru_add(k, p, k->lru_node[p], true);
		k->flags[p] &= (uint8_t)~PG_REFERENCED;
	}
}
