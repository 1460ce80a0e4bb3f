// Typed values of a condition. Each returns undefined for a value it does not accept, so that the
// parser drops that one condition instead of failing the whole query.

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

/** Lower-cases A-Z only: JavaScript's full Unicode folding would let e.g. the Kelvin sign spell `k`. */
export function asciiLower(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    out += code >= 65 && code <= 90 ? String.fromCharCode(code + 32) : ch;
  }
  return out;
}

export function parseBoolean(text: string): boolean | undefined {
  const word = asciiLower(text);
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/**
 * An optionally negative decimal integer of ASCII digits. `Number()` alone would also accept
 * hex, exponents, `Infinity`, blanks and `+`, none of which the grammar allows.
 */
export function parseInteger(text: string): number | undefined {
  const digits = text.startsWith('-') ? text.slice(1) : text;
  if (!isDigits(digits)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** `YYYY-MM-DD` or `YYYYMMDD`, a real calendar day of years 0001–9999, as its UTC midnight. */
export function parseDate(text: string): Date | undefined {
  let compact: string;
  if (text.length === 10 && text[4] === '-' && text[7] === '-') {
    compact = text.slice(0, 4) + text.slice(5, 7) + text.slice(8, 10);
  } else if (text.length === 8) {
    compact = text;
  } else {
    return undefined;
  }
  if (!isDigits(compact)) return undefined;
  const year = Number(compact.slice(0, 4));
  const month = Number(compact.slice(4, 6));
  const day = Number(compact.slice(6, 8));
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date;
}
