// The registry of REST v0 resources. Adding one is one folder (schemas, queries, routes, test) and one
// line here: the routes (index.ts), the landing page's list, the dumps' build and the conformance test read it.
import type { DumpSource } from '../../dumps/dump-source.ts';
import type { Resource } from './common/resource.ts';
import { changes } from './changes/changes.routes.ts';
import { chapters } from './chapters/chapters.routes.ts';
import { contribute } from './contribute/contribute.routes.ts';
import { committees } from './committees/committees.routes.ts';
import { deleted } from './deleted/deleted.routes.ts';
import { events } from './events/events.routes.ts';
import { issues } from './issues/issues.routes.ts';
import { labels } from './labels/labels.routes.ts';
import { members } from './members/members.routes.ts';
import { milestones } from './milestones/milestones.routes.ts';
import { organizations } from './organizations/organizations.routes.ts';
import { projects } from './projects/projects.routes.ts';
import { releases } from './releases/releases.routes.ts';
import { repositories } from './repositories/repositories.routes.ts';
import { snapshots } from './snapshots/snapshots.routes.ts';
import { sponsors } from './sponsors/sponsors.routes.ts';

/** By group, in the order of the landing page; `other` resources are not shown there. */
export const RESOURCE_GROUPS = {
  community: [chapters, committees, events, projects, sponsors, snapshots],
  github: [organizations, members, repositories, issues, labels, milestones, releases],
  other: [changes, contribute, deleted],
} satisfies Record<string, Resource[]>;

/** Every resource, by name: the order of the routes and of the OpenAPI document's paths. */
export const RESOURCES: readonly Resource[] = Object.values(RESOURCE_GROUPS)
  .flat()
  .sort((a, b) => (a.name < b.name ? -1 : 1));

/** Every dump, in the order of the manifest: each resource's, by group (clients and tests compare the manifest). */
export const DUMPS: readonly DumpSource[] = Object.values(RESOURCE_GROUPS)
  .flat()
  .flatMap((resource) => resource.dumps);
