// How place names are compared, and the few spellings the gazetteer does not know.

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

/**
 * Names the gazetteer knows under another spelling, and regions named after no city
 * (mapped to their main city). Keys and values are normalized.
 */
export const PLACE_ALIASES: Record<string, string> = {
  bangalore: 'bengaluru',
  lisboa: 'lisbon',
  gurugram: 'gurgaon',
  mysuru: 'mysore',
  cologne: 'koln',
  frankfurt: 'frankfurt am main',
  gothenburg: 'goteborg',
  klagenfurt: 'klagenfurt am worthersee',
  newcastle: 'newcastle upon tyne',
  aarhus: 'arhus',
  bhubaneswar: 'bhubaneshwar',
  queretaro: 'santiago de queretaro',
  kallakurichi: 'kallakkurichchi',
  kallakkurichi: 'kallakkurichchi',
  sivagangai: 'sivaganga',
  gaurella: 'gaurela',
  kancheepuram: 'kanchipuram',
  'rose hill': 'beau bassin rose hill',
  jkpg: 'jonkoping',
  geneva: 'geneve',
  belagavi: 'belgaum',
  gauhati: 'guwahati',
  kochi: 'cochin',
  thanjavur: 'tanjore',
  // Regions: the city where the region's chapter usually meets, or its largest city.
  'bay area': 'san francisco',
  'triangle nc': 'raleigh',
  triangle: 'raleigh',
  'northern virginia': 'fairfax',
  'south florida': 'miami',
  'orange county': 'irvine',
  'oakland county': 'pontiac',
  'san fernando valley': 'van nuys',
  maui: 'kahului',
  kansai: 'osaka',
  ruhrpott: 'essen',
  ruhr: 'essen',
  'riviera maya': 'playa del carmen',
};

/**
 * Words of institution names ("Indian Institute of Technology Patna") that never name the place,
 * skipped when looking for a place inside a longer name.
 */
export const NON_PLACE_WORDS = new Set(
  (
    'of the and de del da do dos das la le for in at to be ' +
    'university universidad universidade universite college institute institution institutions school academy ' +
    'technology technological technical polytechnic engineering science sciences information research education ' +
    'management graduate student students chapter group national government deemed international ' +
    'indian sri saint city center centre ' +
    'north south east west central northern southern eastern western ' +
    'northeastern northwestern southeastern southwestern region area greater metro'
  ).split(' '),
);

/** Continent names used as chapter regions → the time-zone prefixes of their countries. */
export const CONTINENT_ZONES: Record<string, readonly string[]> = {
  africa: ['Africa/', 'Indian/'],
  asia: ['Asia/', 'Indian/'],
  europe: ['Europe/', 'Atlantic/'],
  oceania: ['Australia/', 'Pacific/'],
  'north america': ['America/'],
  'south america': ['America/'],
  'central america': ['America/'],
  caribbean: ['America/'],
};
