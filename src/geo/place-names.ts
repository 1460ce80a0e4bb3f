// How place names are compared, and the other spellings of country names. Below data/, api/ and db/ (the
// countries migration uses it through countries.ts): it imports nothing from the rest of src/.

// Letters that Unicode decomposition leaves alone (NFKD turns "é" into "e" but not "ı" or "ø").
const LETTERS: Record<string, string> = { ı: 'i', ø: 'o', ł: 'l', đ: 'd', ß: 'ss', æ: 'ae', œ: 'oe', þ: 'th', ð: 'd' };

const ABBREVIATIONS: Record<string, string> = { st: 'saint', ste: 'sainte', mt: 'mount', ft: 'fort' };

/** Lower-case ASCII words separated by single spaces: "St. Louis" and "Saint-Louis" compare equal. */
export function normalizePlace(text: string): string {
  const ascii = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[ıøłđßæœþð]/g, (letter) => LETTERS[letter] ?? letter)
    .replace(/['’`]/g, '')
    .replace(/&/g, ' and ');
  const words = ascii.split(/[^a-z0-9]+/).filter(Boolean);
  const out: string[] = [];
  let afterInitial = false;
  for (const word of words) {
    // Runs of initials are joined: "D.C." becomes "dc", so "Washington DC" finds "Washington, D.C.".
    if (word.length === 1 && afterInitial) out[out.length - 1] += word;
    else out.push(ABBREVIATIONS[word] ?? word);
    afterInitial = word.length === 1;
  }
  return out.join(' ');
}

/** The same name without spaces, for "Dehradun" against "Dehra Dun". */
export function compactPlace(normalized: string): string {
  return normalized.replace(/ /g, '');
}

/** Country names used by the data that the gazetteer spells differently (normalized → ISO code). */
export const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'US',
  us: 'US',
  'united states of america': 'US',
  uk: 'GB',
  'great britain': 'GB',
  britain: 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  'kingdom of saudi arabia': 'SA',
  ksa: 'SA',
  'korea south': 'KR',
  korea: 'KR',
  'republic of korea': 'KR',
  turkiye: 'TR',
  czechia: 'CZ',
  'north macedonia': 'MK',
  'hong kong': 'HK',
  'hong kong sar': 'HK',
  'china mainland': 'CN',
  'mainland china': 'CN',
  uae: 'AE',
  'ivory coast': 'CI',
  'cote divoire': 'CI',
  'viet nam': 'VN',
  'russian federation': 'RU',
  palestine: 'PS',
  holland: 'NL',
  'the netherlands': 'NL',
};
