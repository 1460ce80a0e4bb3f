import { sql, type Kysely } from 'kysely';

// Nearest places (issue 27, `near=LAT,LON` on /chapters/ and /events/). Each placed record gets `earth`: its position
// as a point of the unit sphere in three dimensions (a `cube` of one point), generated from latitude and longitude so
// that every write path keeps it. The straight-line (chord) distance between two such points grows with the
// great-circle distance, so a GiST index on `earth` orders records by distance from any point (`earth <-> point`,
// an index scan that stops after the page: the k nearest without reading the others), and bounds a radius
// (`earth <@ cube_enlarge(point, chord, 3)`, the cube around the sphere's cap). No PostGIS: `cube` is a contrib
// extension that PostgreSQL ships and trusts (13+), and PGlite bundles.

/**
 * The unit vector of a latitude and longitude in degrees, as SQL over two columns. The degrees are rounded to 1e-9
 * (0.1 mm) first: a product of a tiny sine and a tiny cosine (a latitude of 5e-324) would be an underflow, which
 * PostgreSQL raises as an error, so that such a row could not be written at all. cosd/sind are exact at 0 and 90.
 */
export const EARTH_POINT = (latitude: string, longitude: string) => {
  const [lat, lon] = [latitude, longitude].map((column) => `round(${column}::numeric, 9)::float8`);
  return (
    `case when ${latitude} is null or ${longitude} is null then null else cube(array[` +
    `cosd(${lat}) * cosd(${lon}), cosd(${lat}) * sind(${lon}), sind(${lat})]) end`
  );
};

const PLACED = ['chapters', 'events'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS cube WITH SCHEMA public`.execute(db);
  for (const table of PLACED) {
    await sql
      .raw(
        `ALTER TABLE ${table} ADD COLUMN earth public.cube GENERATED ALWAYS AS (${EARTH_POINT('latitude', 'longitude')}) STORED`,
      )
      .execute(db);
    await sql.raw(`CREATE INDEX ${table}_earth_idx ON ${table} USING gist (earth)`).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of PLACED) await sql.raw(`ALTER TABLE ${table} DROP COLUMN earth`).execute(db);
}
