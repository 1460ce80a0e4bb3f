// The `highlight` of a search result: the record's name, or else a short snippet of its text, HTML-escaped, with the
// words that match the query wrapped in <mark>…</mark>. A word matches when it starts with a query word (or a query
// word starts with it: "sheets" marks "Sheet"), ignoring case and accents, or when it is one edit away from a query
// word of four letters or more (the typos the search forgives).

const SNIPPET_LENGTH = 160;
const CONTEXT_BEFORE = 50;

const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML[c]!);
}

/** Lower case, without accents (NFD, combining marks dropped): what the database's cds_unaccent(lower()) compares. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Levenshtein distance, given up past 1 (only "one edit or not" is asked). */
function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length || i === b.length) return true;
  const rest = (x: number, y: number) => a.slice(x) === b.slice(y);
  return (
    rest(i + 1, i + 1) ||
    rest(i + 1, i) ||
    rest(i, i + 1) ||
    (a[i] === b[i + 1] && a[i + 1] === b[i] && rest(i + 2, i + 2))
  );
}

function matches(word: string, queryWords: readonly string[]): boolean {
  return queryWords.some(
    (q) =>
      word.startsWith(q) ||
      (word.length >= 3 && q.startsWith(word)) ||
      (q.length >= 4 && (withinOneEdit(word, q) || withinOneEdit(word.slice(0, q.length), q))),
  );
}

interface Token {
  start: number;
  end: number;
  hit: boolean;
}

function tokens(text: string, queryWords: readonly string[]): Token[] {
  const found: Token[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const start = match.index;
    found.push({ start, end: start + match[0].length, hit: matches(fold(match[0]), queryWords) });
  }
  return found;
}

/** `text[from, to)` escaped, its matching words marked. */
function marked(text: string, list: Token[], from: number, to: number): string {
  let out = '';
  let at = from;
  for (const token of list) {
    if (!token.hit || token.start < from || token.end > to) continue;
    out += `${escapeHtml(text.slice(at, token.start))}<mark>${escapeHtml(text.slice(token.start, token.end))}</mark>`;
    at = token.end;
  }
  return out + escapeHtml(text.slice(at, to));
}

export function highlight(name: string, text: string, query: string): string {
  const queryWords = (fold(query).match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 0);
  const inName = tokens(name, queryWords);
  if (inName.some((t) => t.hit) || !text) return marked(name, inName, 0, name.length);
  const flat = text.replace(/\s+/g, ' ').trim();
  const inText = tokens(flat, queryWords);
  const first = inText.find((t) => t.hit);
  if (!first) return marked(name, inName, 0, name.length);
  // A window around the first match, cut at word boundaries.
  let from = Math.max(0, first.start - CONTEXT_BEFORE);
  if (from > 0) from = inText.find((t) => t.start >= from)?.start ?? first.start;
  let to = Math.min(flat.length, from + SNIPPET_LENGTH);
  if (to < flat.length) to = [...inText].reverse().find((t) => t.end <= to && t.end > first.start)?.end ?? first.end;
  return `${from > 0 ? '…' : ''}${marked(flat, inText, from, to)}${to < flat.length ? '…' : ''}`;
}
