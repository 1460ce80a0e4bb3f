// Conditional GETs through octokit's paginator. Each page is asked with the ETag (and Last-Modified) its
// URL answered last time; a 304 page carries no body, so the next page is the one remembered from then.
import type { GithubClient } from './github.client.ts';
import type { RequestState } from '../../base/sync-state.queries.ts';

export interface FetchedPage {
  url: string;
  status: 200 | 304;
  /** The body of a 200; undefined on a 304. */
  body: unknown;
  /** What to remember about this URL once the page's records are stored. */
  state: RequestState;
}

export interface Fetched {
  pages: FetchedPage[];
  /** 404 or 410 on the first page: the resource is gone (410: a repository with issues turned off). */
  missing: boolean;
}

type Options = { method: string; url: string; headers: Record<string, string> };

// GitHub's largest page is 100 records; no listing we read comes close to this many pages.
const MAX_PAGES = 10_000;

/** GETs `route` (`GET /orgs/{org}/repos`), following Link headers when `paginate`. */
export async function fetchConditional(
  octokit: GithubClient,
  route: string,
  params: Record<string, unknown>,
  known: ReadonlyMap<string, RequestState>,
  paginate = true,
): Promise<Fetched> {
  const fetched: Fetched = { pages: [], missing: false };
  const request = async ({ method, url, headers }: Options) => {
    const before = known.get(url);
    const conditions: Record<string, string> = {};
    if (before?.etag) conditions['if-none-match'] = before.etag;
    if (before?.lastModified) conditions['if-modified-since'] = before.lastModified;
    try {
      const response = await octokit.request({ method, url, headers: { ...headers, ...conditions } });
      if (paginate && !Array.isArray(response.data))
        throw new Error(`${method} ${url}: expected a list, got ${typeof response.data}`);
      const state = {
        url,
        etag: response.headers.etag ?? '',
        lastModified: response.headers['last-modified'] ?? '',
        nextUrl: nextOf(response.headers.link),
        githubIds: [],
      };
      fetched.pages.push({ url, status: 200, body: response.data, state });
      return response;
    } catch (error) {
      const { status, response } = error as { status?: number; response?: { headers?: Record<string, string> } };
      if (status === 304 && before) {
        const nextUrl = response?.headers?.link ? nextOf(response.headers.link) : before.nextUrl;
        fetched.pages.push({ url, status: 304, body: undefined, state: { ...before, nextUrl } });
        return { status, url, headers: nextUrl ? { link: `<${nextUrl}>; rel="next"` } : {}, data: [] };
      }
      if ((status === 404 || status === 410) && fetched.pages.length === 0) {
        fetched.missing = true;
        return { status, url, headers: {}, data: [] };
      }
      throw error;
    }
  };
  const [method = 'GET', path = ''] = route.split(' ');
  const endpoint = octokit.request.endpoint.defaults({ method, url: path });
  if (!paginate) {
    const { method, url, headers } = endpoint(params);
    await request({ method, url, headers: headers as Record<string, string> });
    return fetched;
  }
  const seen = new Set<string>();
  // The paginator accepts a request function of our own: it calls it for each page, following Link.
  const iterate = octokit.paginate.iterator as (
    request: unknown,
    parameters: Record<string, unknown>,
  ) => AsyncIterable<unknown>;
  for await (const _page of iterate(Object.assign(request, { endpoint }), params)) {
    const last = fetched.pages.at(-1);
    if (!last?.state.nextUrl) break;
    if (seen.has(last.url) || seen.size > MAX_PAGES) throw new Error(`${route}: pagination loops at ${last.url}`);
    seen.add(last.url);
  }
  return fetched;
}

/** The records of the 200 pages (304 pages have none to give). */
export function freshItems(fetched: Fetched): unknown[] {
  return fetched.pages.flatMap((page) => (page.status === 200 && Array.isArray(page.body) ? page.body : []));
}

export function isUnchanged(fetched: Fetched): boolean {
  return fetched.pages.every((page) => page.status === 304);
}

function nextOf(link: string | undefined): string {
  return /<([^<>]+)>;\s*rel="next"/.exec(link ?? '')?.[1] ?? '';
}
