/*
 * suggest.c — "did you mean": the candidate with the smallest
 * case-insensitive Damerau–Levenshtein (optimal string alignment) distance,
 * accepted only when the distance is small relative to the word, so that
 * unrelated words are never suggested. Ties go to the earlier candidate.
 */
#include <ctype.h>
#include <string.h>

#include "compiler/support/support.h"

enum { SUGGEST_MAX = 64 };

static size_t osa_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > SUGGEST_MAX || m > SUGGEST_MAX) return (size_t)-1;
  size_t d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++) {
    for (size_t j = 1; j <= m; j++) {
      int ca = tolower((unsigned char)a[i - 1]);
      int cb = tolower((unsigned char)b[j - 1]);
      /* '-' and '_' are interchangeable in names. */
      if ((ca == '-' || ca == '_') && (cb == '-' || cb == '_')) ca = cb;
      size_t cost = ca == cb ? 0 : 1;
      size_t v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 &&
          ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  }
  return d[n][m];
}

static bool prefix_match(const char *word, const char *cand) {
  /* "batch" for "batch_size", "v100" for "V100-SXM2-16GB". */
  size_t n = strlen(word);
  if (n < 3 || n >= strlen(cand)) return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)word[i]) != tolower((unsigned char)cand[i]))
      return false;
  return true;
}

const char *dc_suggest(const char *word, const char *const *candidates,
                       size_t n) {
  if (!word || !*word) return NULL;
  size_t wl = strlen(word);
  size_t limit = wl <= 3 ? 1 : wl <= 6 ? 2 : 3;
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    if (!candidates[i]) continue;
    size_t dist = osa_distance(word, candidates[i]);
    if (dist < best_d) {
      best_d = dist;
      best = candidates[i];
    }
  }
  if (best && best_d <= limit && best_d < strlen(best)) return best;
  for (size_t i = 0; i < n; i++)
    if (candidates[i] && prefix_match(word, candidates[i]))
      return candidates[i];
  return NULL;
}
