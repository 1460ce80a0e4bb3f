import { resource } from '../common/resource.ts';
import { CONTRIBUTE_DESCRIPTION, ContributeFilters, ContributeItem } from './contribute.schemas.ts';
import { CONTRIBUTE_ORDERING, listContribute } from './contribute.queries.ts';

// A list without a detail or a dump of its own: its records are issues (their detail and dump are the issues').
export const contribute = resource('contribute', 'ContributeIssue', {
  summary: 'List issues to contribute to',
  description: CONTRIBUTE_DESCRIPTION,
  list: { filters: ContributeFilters, item: ContributeItem, ordering: CONTRIBUTE_ORDERING, query: listContribute },
  dumps: [],
});
