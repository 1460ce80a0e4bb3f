// The `highlight` of a search result: the record's name, or else a short snippet of its text, HTML-escaped, with the
// words that match the query wrapped in <mark>…</mark>. A word matches when it starts with a query word (or a query
// word starts with it: "sheets" marks "Sheet"), ignoring case and accents, or when it is one edit away from a query
// word of four letters or more (the typos the search forgives).
import { editDistance, escapeHtml } from '../../../text.ts';

const SNIPPET_LENGTH = 160;
const CONTEXT_BEFORE = 50;

/** Lower case, without accents (NFD, combining marks dropped): what the database's cds_unaccent(lower()) compares. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

function matches(word: string, queryWords: readonly string[]): boolean {
  return queryWords.some(
    (q) =>
      word.startsWith(q) ||
      (word.length >= 3 && q.startsWith(word)) ||
      (q.length >= 4 && (editDistance(word, q, 1) <= 1 || editDistance(word.slice(0, q.length), q, 1) <= 1)),
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
