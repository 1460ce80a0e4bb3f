import { resource } from '../common/resource.ts';
import { fieldsOf, inRepositories, REPOSITORY_PARAMS } from '../common/dumps.ts';
import type { ListQuery } from '../common/pagination.ts';
import { LabelFilters, LabelItem, LabelStored } from './labels.schemas.ts';
import { LABEL_GROUPS, LABEL_ORDERING, listLabels } from './labels.queries.ts';

export const labels = resource('labels', 'Label', {
  description:
    'Issue labels of the mirrored GitHub repositories. Default ordering `-nest_created_at`: ' +
    'the labels this service stored most recently first (the interface states no default).',
  list: { filters: LabelFilters, item: LabelItem, ordering: LABEL_ORDERING, groups: LABEL_GROUPS, query: listLabels },
  dumps: [
    {
      // Labels have no detail: the list's item, and its repository's path parameters (a label is its name in it).
      resource: 'labels',
      record: LabelItem,
      params: ['organization_id', 'repository_id'],
      key: 'labels.id',
      extra: LabelStored,
      rows: (db) =>
        inRepositories(listLabels(db, {}) as ListQuery, 'labels')
          .clearSelect()
          .select([...fieldsOf('labels', LabelItem), ...REPOSITORY_PARAMS]),
    },
  ],
});
