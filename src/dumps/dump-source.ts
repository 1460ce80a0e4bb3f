// What a dump is, as each resource declares its own (in the registry, api/v0/resources.ts): the build reads the
// declarations it is given and knows no resource itself.
import type { RawBuilder, SelectQueryBuilder } from 'kysely';
import type { TObject } from '@sinclair/typebox';
import type { Db } from '../db/index.ts';

/** A dump's records as a query builder (a list's query, api/v0/common/pagination.ts ListQuery, fits). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DumpRows = SelectQueryBuilder<any, any, any>;

/** One dump: which records, with which fields, named by which path parameters. */
export interface DumpSource {
  /** The manifest's `resource`, and the file `/api/v0/dumps/<resource>.ndjson.gz`. */
  resource: string;
  /** The fields of each line's `record`, in this order: the detail's response schema (a list item where none). */
  record: TObject;
  /**
   * Stored fields the detail leaves out but a filter, the search, an ordering or a group_by reads (an event's
   * `category`, a repository's `language`): each line's `extra`, so that a copy seeded from the dumps answers those
   * like its source (docs/api.md, Bulk dumps). Columns of the key's table of the same name; timestamps to the
   * microsecond (an ordering's ties). The manifest lists their names (`extra_fields`).
   */
  extra?: TObject;
  /**
   * The extra fields that are no column of the key's table, each as an expression over the rows' tables (an issue's
   * labels and assignees, read from its link tables): their tables count among those the dump reads (tablesRead).
   */
  extraComputed?: Record<string, RawBuilder<unknown>>;
  /**
   * The extra fields read from other tables by the key (an issue's labels and assignees, from its link tables),
   * aggregated once for each batch over the batch's range of keys and joined by key: a subquery per record (as
   * extraComputed) cost an issue's batch 1.7× its time. Their tables count among those the dump reads.
   */
  extraGrouped?: Record<string, GroupedExtra>;
  /** The names of each line's `params`, in the order of the detail's path. */
  params: readonly string[];
  /** The records: their fields by name, each param as `__p_<name>`; read in the order of `key`. */
  rows: (db: Db) => DumpRows | Promise<DumpRows>;
  /** The table's id: the order of the lines, and where each batch starts. */
  key: string;
  /** Named subqueries the rows use (`WITH …`). */
  with?: RawBuilder<unknown>;
}

/** An extra field aggregated by the key (dump-source's extraGrouped). */
export interface GroupedExtra {
  /**
   * Its values, one row per key that has one: columns `k` (the key) and `v` (the field as JSON, of type json: written
   * into the line as it is), for the keys `inRange` keeps (a condition on the column of another table that holds the
   * key: the batch's range).
   */
  rows: (inRange: (column: string) => RawBuilder<boolean>) => RawBuilder<unknown>;
  /** The value of a key without a row (json). */
  otherwise: RawBuilder<unknown>;
}
