// Text helpers any layer may use: HTML escaping (the pages written by hand, the highlights of search results) and the
// edit distance of the typos search forgives.

const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` safe as HTML content and as a quoted attribute value (either quote). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML[c]!);
}

/**
 * Optimal string alignment distance (Levenshtein with adjacent transpositions) between `a` and `b`, in UTF-16 units,
 * given up past `max`: any distance above it is `max + 1`. Only the cells within `max` of the diagonal are computed
 * (the others are above `max` anyway), so a comparison costs O(length × max), not O(length²).
 */
export function editDistance(a: string, b: string, max: number): number {
  const over = max + 1;
  if (Math.abs(a.length - b.length) > max) return over;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => Math.min(j, over));
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1).fill(over);
    let best = Math.min(i, over);
    current[0] = best;
    for (let j = Math.max(1, i - max); j <= Math.min(b.length, i + max); j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      d = Math.min(d, over);
      current[j] = d;
      best = Math.min(best, d);
    }
    if (best > max) return over;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
