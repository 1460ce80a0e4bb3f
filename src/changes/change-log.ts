// The change log's vocabulary (issue 43, docs/changes.md): a change as every channel shows it (the pull feed, the
// stream, webhooks, the MCP tool), its types, and the resources it covers. The rows are written by the triggers of
// migration 0014; change-log.queries.ts reads them.

/** Each logged resource (its list's name) and the singular its change types start with. */
export const LOGGED_RESOURCES = {
  chapters: 'chapter',
  committees: 'committee',
  events: 'event',
  projects: 'project',
  sponsors: 'sponsor',
  snapshots: 'snapshot',
  organizations: 'organization',
  members: 'member',
  repositories: 'repository',
  issues: 'issue',
  labels: 'label',
  milestones: 'milestone',
  releases: 'release',
} as const;

export type LoggedResource = keyof typeof LOGGED_RESOURCES;
export const ACTIONS = ['created', 'updated', 'deleted'] as const;
export type ChangeAction = (typeof ACTIONS)[number];

export const RESOURCE_NAMES = Object.keys(LOGGED_RESOURCES) as LoggedResource[];

/** Every change type, `chapter.created` … `release.deleted`, by resource. */
export const CHANGE_TYPES: readonly string[] = RESOURCE_NAMES.flatMap((resource) =>
  ACTIONS.map((action) => changeType(resource, action)),
);

export function changeType(resource: LoggedResource, action: ChangeAction): string {
  return `${LOGGED_RESOURCES[resource]}.${action}`;
}

/** `issue.updated` → issues, updated; undefined for a type that is not one. */
export function parseChangeType(type: string): { resource: LoggedResource; action: ChangeAction } | undefined {
  const [singular, action] = type.split('.');
  const resource = RESOURCE_NAMES.find((name) => LOGGED_RESOURCES[name] === singular);
  return resource && (ACTIONS as readonly string[]).includes(action ?? '')
    ? { resource, action: action as ChangeAction }
    : undefined;
}

export function isLoggedResource(name: string): name is LoggedResource {
  return Object.hasOwn(LOGGED_RESOURCES, name);
}

/** A change, as every channel shows it. */
export interface Change {
  id: number;
  type: string;
  resource: LoggedResource;
  key: string;
  occurred_at: string;
  data_version: number;
  /** The fields that changed: updates only (null for `created` and `deleted`). */
  changed_fields: string[] | null;
  /** The record's detail path; null for a resource without one (labels). */
  url: string | null;
}

/** What a reader asks for: after an id, from a time, of some resources or types, of one record. */
export interface ChangeFilter {
  after?: number;
  since?: Date;
  resources?: readonly LoggedResource[];
  types?: readonly string[];
  /** With exactly one resource. */
  key?: string;
}

/** Whether a change passes a filter (the stream's live changes, webhooks' subscriptions): as the SQL of the reader. */
export function matches(change: Change, filter: ChangeFilter): boolean {
  if (filter.after !== undefined && change.id <= filter.after) return false;
  if (filter.since && Date.parse(change.occurred_at) < filter.since.getTime()) return false;
  if (filter.resources?.length && !filter.resources.includes(change.resource)) return false;
  if (filter.types?.length && !filter.types.includes(change.type)) return false;
  if (filter.key !== undefined && change.key !== filter.key) return false;
  return true;
}
