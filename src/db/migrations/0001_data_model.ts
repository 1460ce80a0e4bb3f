import { sql, type Kysely } from 'kysely';

// Milestones and issues are both numbered within their repository, open or closed, and listed by the same
// orderings: the columns and indexes they share, written once (the schema is the one written out twice before).
const NUMBERED_ITEM_KEYS = sql.raw(`id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
      number integer NOT NULL,
      title text NOT NULL,
      body text NOT NULL DEFAULT '',
      state text NOT NULL CHECK (state IN ('open', 'closed')),`);

const NUMBERED_ITEM_TIMES = sql.raw(`created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (repository_id, number)`);

function numberedItemIndexes(table: 'milestones' | 'issues') {
  return sql.raw(`CREATE INDEX ${table}_state_idx ON ${table} (state);
    CREATE INDEX ${table}_created_at_idx ON ${table} (created_at, id);
    CREATE INDEX ${table}_updated_at_idx ON ${table} (updated_at, id);
    CREATE INDEX ${table}_default_order_idx ON ${table} (created_at, updated_at, id);`);
}

// The community records (from the OWASP website data) and the mirrored GitHub records.
// Every table has a bigint primary key `id` used as the hidden tie-breaker of every ordering,
// public identifiers are unique case-insensitively, and `nest_created_at` / `nest_updated_at`
// record when this service stored or last changed the row (the labels list orders by them).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE app_meta (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE chapters (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      url text,
      country text NOT NULL DEFAULT '',
      region text NOT NULL DEFAULT '',
      postal_code text NOT NULL DEFAULT '',
      suggested_location text NOT NULL DEFAULT '',
      level text NOT NULL DEFAULT '',
      currency text NOT NULL DEFAULT '',
      meetup_group text NOT NULL DEFAULT '',
      related_urls jsonb NOT NULL DEFAULT '[]',
      contribution_data jsonb NOT NULL DEFAULT '{}',
      contribution_stats jsonb NOT NULL DEFAULT '{}',
      is_active boolean NOT NULL DEFAULT false,
      latitude double precision CHECK (latitude BETWEEN -90 AND 90),
      longitude double precision CHECK (longitude BETWEEN -180 AND 180),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX chapters_key_uq ON chapters (lower(key));
    -- The public list shows active chapters with coordinates only: its orderings read these partial indexes.
    CREATE INDEX chapters_created_at_idx ON chapters (created_at, id) WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL;
    CREATE INDEX chapters_updated_at_idx ON chapters (updated_at, id) WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL;
    CREATE INDEX chapters_latitude_idx ON chapters (latitude, id) WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL;
    CREATE INDEX chapters_longitude_idx ON chapters (longitude, id) WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL;
    CREATE INDEX chapters_country_idx ON chapters (lower(country));

    CREATE TABLE committees (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      url text,
      is_active boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX committees_key_uq ON committees (lower(key));
    CREATE INDEX committees_created_at_idx ON committees (created_at, id);
    CREATE INDEX committees_updated_at_idx ON committees (updated_at, id);

    CREATE TABLE projects (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      url text,
      level text NOT NULL CHECK (level IN ('flagship', 'production', 'lab', 'incubator', 'other')),
      type text NOT NULL DEFAULT '',
      is_active boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX projects_key_uq ON projects (lower(key));
    CREATE INDEX projects_level_idx ON projects (level);
    CREATE INDEX projects_name_idx ON projects (name, id);
    CREATE INDEX projects_created_at_idx ON projects (created_at, id);
    CREATE INDEX projects_updated_at_idx ON projects (updated_at, id);

    CREATE TABLE events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      summary text NOT NULL DEFAULT '',
      category text NOT NULL CHECK (category IN ('appsec_days', 'global', 'other', 'partner')),
      start_date date NOT NULL,
      end_date date CHECK (end_date IS NULL OR end_date >= start_date),
      url text NOT NULL DEFAULT '',
      suggested_location text NOT NULL DEFAULT '',
      latitude double precision CHECK (latitude BETWEEN -90 AND 90),
      longitude double precision CHECK (longitude BETWEEN -180 AND 180),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX events_key_uq ON events (lower(key));
    CREATE INDEX events_start_date_idx ON events (start_date, id);
    CREATE INDEX events_end_date_idx ON events (end_date, id);
    CREATE INDEX events_default_order_idx ON events (start_date, end_date, id);
    CREATE INDEX events_upcoming_idx ON events ((coalesce(end_date, start_date)));
    CREATE INDEX events_latitude_idx ON events (latitude, id);
    CREATE INDEX events_longitude_idx ON events (longitude, id);

    CREATE TABLE sponsors (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      sort_name text NOT NULL DEFAULT '',
      sponsor_type text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      image_url text NOT NULL DEFAULT '',
      job_url text NOT NULL DEFAULT '',
      is_member boolean NOT NULL DEFAULT false,
      member_type text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX sponsors_key_uq ON sponsors (lower(key));
    CREATE INDEX sponsors_name_idx ON sponsors (name, id);
    CREATE INDEX sponsors_sponsor_type_idx ON sponsors (lower(sponsor_type));
    CREATE INDEX sponsors_member_type_idx ON sponsors (lower(member_type));
    CREATE INDEX sponsors_is_member_idx ON sponsors (is_member);

    CREATE TABLE organizations (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      login text NOT NULL,
      name text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      company text NOT NULL DEFAULT '',
      location text NOT NULL DEFAULT '',
      email text NOT NULL DEFAULT '',
      avatar_url text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      followers_count integer NOT NULL DEFAULT 0,
      public_repositories_count integer NOT NULL DEFAULT 0,
      created_at timestamptz,
      updated_at timestamptz,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX organizations_login_uq ON organizations (lower(login));
    CREATE INDEX organizations_location_idx ON organizations (lower(location));
    CREATE INDEX organizations_created_at_idx ON organizations (created_at, id);
    CREATE INDEX organizations_updated_at_idx ON organizations (updated_at, id);

    CREATE TABLE members (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      login text NOT NULL,
      name text NOT NULL DEFAULT '',
      avatar_url text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      bio text NOT NULL DEFAULT '',
      company text NOT NULL DEFAULT '',
      location text NOT NULL DEFAULT '',
      title text NOT NULL DEFAULT '',
      twitter_username text NOT NULL DEFAULT '',
      followers_count integer NOT NULL DEFAULT 0,
      following_count integer NOT NULL DEFAULT 0,
      public_repositories_count integer NOT NULL DEFAULT 0,
      created_at timestamptz,
      updated_at timestamptz,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX members_login_uq ON members (lower(login));
    CREATE INDEX members_company_idx ON members (lower(company));
    CREATE INDEX members_location_idx ON members (lower(location));
    CREATE INDEX members_created_at_idx ON members (created_at, id);
    CREATE INDEX members_updated_at_idx ON members (updated_at, id);

    CREATE TABLE organization_members (
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      member_id bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
      PRIMARY KEY (organization_id, member_id)
    );
    CREATE INDEX organization_members_member_idx ON organization_members (member_id);

    -- A repository belongs to an owner login (an organization, or a user for personal repositories);
    -- organization_id is set when the owner is a stored organization.
    CREATE TABLE repositories (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      owner_login text NOT NULL,
      organization_id bigint REFERENCES organizations (id) ON DELETE SET NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      homepage text NOT NULL DEFAULT '',
      language text NOT NULL DEFAULT '',
      default_branch text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      license text NOT NULL DEFAULT '',
      topics jsonb NOT NULL DEFAULT '[]',
      is_archived boolean NOT NULL DEFAULT false,
      is_fork boolean NOT NULL DEFAULT false,
      commits_count integer NOT NULL DEFAULT 0,
      contributors_count integer NOT NULL DEFAULT 0,
      forks_count integer NOT NULL DEFAULT 0,
      stars_count integer NOT NULL DEFAULT 0,
      watchers_count integer NOT NULL DEFAULT 0,
      open_issues_count integer NOT NULL DEFAULT 0,
      size integer NOT NULL DEFAULT 0,
      pushed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX repositories_owner_name_uq ON repositories (lower(owner_login), lower(name));
    CREATE INDEX repositories_organization_idx ON repositories (organization_id);
    CREATE INDEX repositories_created_at_idx ON repositories (created_at, id);
    CREATE INDEX repositories_updated_at_idx ON repositories (updated_at, id);
    -- The default orderings (-created_at,-updated_at and the id tie-breaker) read these backwards.
    CREATE INDEX repositories_default_order_idx ON repositories (created_at, updated_at, id);

    CREATE TABLE milestones (
      ${NUMBERED_ITEM_KEYS}
      url text NOT NULL DEFAULT '',
      author_id bigint REFERENCES members (id) ON DELETE SET NULL,
      open_issues_count integer NOT NULL DEFAULT 0,
      closed_issues_count integer NOT NULL DEFAULT 0,
      due_on timestamptz,
      closed_at timestamptz,
      ${NUMBERED_ITEM_TIMES}
    );
    ${numberedItemIndexes('milestones')}

    CREATE TABLE issues (
      ${NUMBERED_ITEM_KEYS}
      state_reason text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      author_id bigint REFERENCES members (id) ON DELETE SET NULL,
      milestone_id bigint REFERENCES milestones (id) ON DELETE SET NULL,
      comments_count integer NOT NULL DEFAULT 0,
      is_locked boolean NOT NULL DEFAULT false,
      closed_at timestamptz,
      ${NUMBERED_ITEM_TIMES}
    );
    ${numberedItemIndexes('issues')}
    CREATE INDEX issues_author_idx ON issues (author_id);
    CREATE INDEX issues_milestone_idx ON issues (milestone_id);

    CREATE TABLE labels (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      color text NOT NULL CHECK (color ~ '^[0-9a-f]{6}$'),
      is_default boolean NOT NULL DEFAULT false,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (repository_id, name)
    );
    CREATE INDEX labels_color_idx ON labels (color);
    CREATE INDEX labels_nest_created_at_idx ON labels (nest_created_at, id);
    CREATE INDEX labels_nest_updated_at_idx ON labels (nest_updated_at, id);

    CREATE TABLE issue_labels (
      issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
      label_id bigint NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
      PRIMARY KEY (issue_id, label_id)
    );
    CREATE INDEX issue_labels_label_idx ON issue_labels (label_id);

    CREATE TABLE issue_assignees (
      issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
      member_id bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
      PRIMARY KEY (issue_id, member_id)
    );
    CREATE INDEX issue_assignees_member_idx ON issue_assignees (member_id);

    CREATE TABLE releases (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      github_id bigint NOT NULL UNIQUE,
      repository_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
      tag_name text NOT NULL,
      name text NOT NULL DEFAULT '',
      description text NOT NULL DEFAULT '',
      url text NOT NULL DEFAULT '',
      author_id bigint REFERENCES members (id) ON DELETE SET NULL,
      is_draft boolean NOT NULL DEFAULT false,
      is_prerelease boolean NOT NULL DEFAULT false,
      published_at timestamptz,
      created_at timestamptz NOT NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (repository_id, tag_name)
    );
    CREATE INDEX releases_tag_name_idx ON releases (tag_name);
    CREATE INDEX releases_published_at_idx ON releases (published_at, id);
    CREATE INDEX releases_created_at_idx ON releases (created_at, id);
    CREATE INDEX releases_default_order_idx ON releases (published_at, created_at, id);

    -- People who lead a chapter, committee or project, as listed by the website data.
    -- Their e-mail addresses are deliberately not stored.
    CREATE TABLE leaders (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      key text NOT NULL,
      name text NOT NULL,
      member_id bigint REFERENCES members (id) ON DELETE SET NULL,
      nest_created_at timestamptz NOT NULL DEFAULT now(),
      nest_updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX leaders_key_uq ON leaders (lower(key));

    CREATE TABLE entity_leaders (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      leader_id bigint NOT NULL REFERENCES leaders (id) ON DELETE CASCADE,
      chapter_id bigint REFERENCES chapters (id) ON DELETE CASCADE,
      committee_id bigint REFERENCES committees (id) ON DELETE CASCADE,
      project_id bigint REFERENCES projects (id) ON DELETE CASCADE,
      position integer NOT NULL DEFAULT 0,
      CHECK (num_nonnulls(chapter_id, committee_id, project_id) = 1)
    );
    CREATE UNIQUE INDEX entity_leaders_chapter_uq ON entity_leaders (chapter_id, leader_id) WHERE chapter_id IS NOT NULL;
    CREATE UNIQUE INDEX entity_leaders_committee_uq ON entity_leaders (committee_id, leader_id) WHERE committee_id IS NOT NULL;
    CREATE UNIQUE INDEX entity_leaders_project_uq ON entity_leaders (project_id, leader_id) WHERE project_id IS NOT NULL;
    CREATE INDEX entity_leaders_leader_idx ON entity_leaders (leader_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE entity_leaders, leaders, releases, issue_assignees, issue_labels, labels, issues,
      milestones, repositories, organization_members, members, organizations, sponsors, events,
      projects, committees, chapters, app_meta;
  `.execute(db);
}
