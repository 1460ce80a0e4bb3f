// Which records a recorded response holds, told by the request it answers (as listed in manifest.json):
// the path says what the body is and, for issues and labels, which repository or issue it belongs to.
import { ImportError } from '../base/import-error.ts';
import { Fields } from './github.fields.ts';
import type { GithubCollector } from './github.collect.ts';

type Handler = (collect: GithubCollector, body: unknown, source: string, params: string[]) => void;

const eachOf = (body: unknown) => (Array.isArray(body) ? body : [body]);
const REPO = '([^/]+/[^/]+)';

const ROUTES: [RegExp, Handler][] = [
  [/^\/orgs\/[^/]+$/, (c, body, source) => void c.organization(body, source)],
  [
    /^\/orgs\/([^/]+)\/(?:public_)?members$/,
    (c, body, source, [login]) => {
      for (const user of eachOf(body)) c.membership({ login: login! }, user, source);
    },
  ],
  [
    /^\/(?:(?:orgs|users)\/[^/]+|user)\/repos$/,
    (c, body, source) => {
      for (const repository of eachOf(body)) c.repository(repository, source);
    },
  ],
  [new RegExp(`^/repos/${REPO}$`), (c, body, source) => c.repository(body, source)],
  [
    new RegExp(`^/repos/${REPO}/issues(?:/\\d+)?$`),
    (c, body, source, [name]) => {
      for (const issue of eachOf(body)) c.issue(issue, source, name);
    },
  ],
  [
    /^\/repositories\/\d+\/issues$/,
    (c, body, source) => {
      for (const issue of eachOf(body)) c.issue(issue, source);
    },
  ],
  [
    new RegExp(`^/repos/${REPO}/issues/(\\d+)/labels$`),
    (c, body, source, [name, number]) => {
      c.labelsOfIssue(eachOf(body), source, name!, Number(number));
    },
  ],
  [
    new RegExp(`^/repos/${REPO}/labels(?:/[^/]+)?$`),
    (c, body, source, [name]) => {
      for (const label of eachOf(body)) c.label(label, source, name);
    },
  ],
  [
    new RegExp(`^/repos/${REPO}/milestones(?:/\\d+)?$`),
    (c, body, source, [name]) => {
      for (const milestone of eachOf(body)) c.milestone(milestone, source, name);
    },
  ],
  [
    new RegExp(`^/repos/${REPO}/releases(?:/tags/[^/]+|/latest|/\\d+)?$`),
    (c, body, source, [name]) => {
      for (const release of eachOf(body)) c.release(release, source, name);
    },
  ],
  [
    /^\/repos\/[^/]+\/[^/]+\/releases\/\d+\/assets$/,
    (c, body, source) => {
      for (const asset of eachOf(body)) {
        const f = new Fields(asset, 'release asset', source);
        if (f.has('uploader')) c.account(f.api.uploader, source);
      }
    },
  ],
  [
    /^\/repos\/[^/]+\/[^/]+\/(?:collaborators|assignees|contributors)$/,
    (c, body, source) => {
      for (const user of eachOf(body)) c.account(user, source);
    },
  ],
  [/^\/users\/[^/]+$/, (c, body, source) => c.account(body, source)],
  [
    /^\/search\/issues$/,
    (c, body, source) => {
      for (const issue of new Fields(body, 'search result', source).list('items')) c.issue(issue, source);
    },
  ],
];

/** Adds the records of one response body, given the request it answers (`GET /orgs/x -> 200`). */
export function collectResponse(collect: GithubCollector, request: string, body: unknown, source: string): void {
  if (request.startsWith('webhook delivery:')) return collectPayload(collect, body, source);
  const path = /^[A-Z]+ (\/[^?\s]*)/.exec(request)?.[1] ?? '';
  for (const [pattern, handler] of ROUTES) {
    const match = pattern.exec(path);
    if (match) return handler(collect, body, source, match.slice(1));
  }
  throw new ImportError(source, undefined, `no importer for the response to "${request}"`);
}

// Webhook payloads wrap REST-shaped objects; the repository comes first so the others can name it.
export function collectPayload(collect: GithubCollector, body: unknown, source: string): void {
  const payload = new Fields(body, 'webhook payload', source);
  const { api } = payload;
  let context: string | undefined;
  if (payload.has('repository')) {
    collect.repository(api.repository, source);
    context = new Fields(api.repository, 'repository', source).text('full_name') || undefined;
  }
  if (payload.has('organization')) collect.organization(api.organization, source);
  if (payload.has('sender')) collect.account(api.sender, source);
  if (payload.has('issue')) collect.issue(api.issue, source, context);
  if (payload.has('milestone')) collect.milestone(api.milestone, source, context);
  if (payload.has('label')) collect.label(api.label, source, context);
  if (payload.has('release')) collect.release(api.release, source, context);
  if (payload.has('membership')) {
    const organization = payload.ref('organization') ?? payload.fail('a membership without its organization');
    collect.membership({ githubId: organization }, new Fields(api.membership, 'membership', source).api.user, source);
  }
}
