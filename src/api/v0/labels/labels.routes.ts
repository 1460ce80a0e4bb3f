import { resource } from '../common/resource.ts';
import { LabelFilters, LabelItem } from './labels.schemas.ts';
import { LABEL_GROUPS, LABEL_ORDERING, listLabels } from './labels.queries.ts';

export const labels = resource('labels', 'Label', {
  description:
    'Issue labels of the mirrored GitHub repositories. Default ordering `-nest_created_at`: ' +
    'the labels this service stored most recently first (the interface states no default).',
  list: { filters: LabelFilters, item: LabelItem, ordering: LABEL_ORDERING, groups: LABEL_GROUPS, query: listLabels },
});
