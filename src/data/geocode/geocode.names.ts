// The few spellings the gazetteer does not know, and words that name no place (how names are compared:
// src/geo/place-names.ts).

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

/** Common English names of countries that neither CLDR nor Natural Earth spell so (normalized → ISO code). */
export const COUNTRY_NAMES: Record<string, string> = {
  'the bahamas': 'BS',
  'the gambia': 'GM',
  'democratic republic of the congo': 'CD',
  'republic of the congo': 'CG',
  'czech republic': 'CZ',
  'east timor': 'TL',
  swaziland: 'SZ',
  'cape verde': 'CV',
  burma: 'MM',
  macau: 'MO',
  'fiji islands': 'FJ',
  'saint vincent and the grenadines': 'VC',
  'vatican city state': 'VA',
};
