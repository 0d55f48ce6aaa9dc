/*
 * Intrusive doubly-linked list (as in UCX's ucs_list and the kernel's).
 */
#ifndef SFS_LIST_H
#define SFS_LIST_H

#include <stddef.h>

typedef struct sfs_list {
    struct sfs_list *prev;
    struct sfs_list *next;
} sfs_list_t;

#define SFS_LIST_INIT(_head)                                                                       \
    {                                                                                              \
        &(_head), &(_head)                                                                         \
    }
#define sfs_container_of(_ptr, _type, _member) ((_type *)((char *)(_ptr)-offsetof(_type, _member)))

static inline void sfs_list_init(sfs_list_t *head)
{
    head->prev = head->next = head;
}

static inline int sfs_list_is_empty(const sfs_list_t *head)
{
    return head->next == head;
}

static inline void sfs_list_insert_between(sfs_list_t *elem, sfs_list_t *prev, sfs_list_t *next)
{
    elem->prev = prev;
    elem->next = next;
    prev->next = elem;
    next->prev = elem;
}

static inline void sfs_list_add_tail(sfs_list_t *head, sfs_list_t *elem)
{
    sfs_list_insert_between(elem, head->prev, head);
}

static inline void sfs_list_add_head(sfs_list_t *head, sfs_list_t *elem)
{
    sfs_list_insert_between(elem, head, head->next);
}

static inline void sfs_list_del(sfs_list_t *elem)
{
    elem->prev->next = elem->next;
    elem->next->prev = elem->prev;
    elem->prev = elem->next = elem;
}

static inline sfs_list_t *sfs_list_pop_head(sfs_list_t *head)
{
    sfs_list_t *first = head->next;

    if (first == head) {
        return NULL;
    }
    sfs_list_del(first);
    return first;
}

/* Move every element of `from` to the tail of `to`; `from` ends empty. */
static inline void sfs_list_splice_tail(sfs_list_t *to, sfs_list_t *from)
{
    if (sfs_list_is_empty(from)) {
        return;
    }
    from->next->prev = to->prev;
    to->prev->next   = from->next;
    from->prev->next = to;
    to->prev         = from->prev;
    sfs_list_init(from);
}

#define sfs_list_for_each_safe(_pos, _tmp, _head)                                                  \
    for ((_pos) = (_head)->next, (_tmp) = (_pos)->next; (_pos) != (_head);                         \
         (_pos) = (_tmp), (_tmp) = (_pos)->next)

#endif
