// The GraphQL interface: API key management and sign-in, as the reference implementation names it.
export const typeDefs = /* GraphQL */ `
  "An ISO 8601 date and time with offset."
  scalar DateTime
  scalar UUID

  type ApiKeyNode {
    "Relay-style global id."
    id: ID!
    uuid: UUID!
    name: String!
    createdAt: DateTime!
    expiresAt: DateTime!
    isRevoked: Boolean!
    lastUsedAt: DateTime
    "True when the key is valid and expires within 7 days: rotate it or create another."
    expiresSoon: Boolean!
    revokedAt: DateTime
    "Where GitHub's secret scanning found this key published (the key was revoked at once); null otherwise."
    leakUrl: String
    "When that report arrived."
    leakReportedAt: DateTime
  }

  type CreateApiKeyResult {
    ok: Boolean!
    code: String
    message: String
    "The key itself: returned only here, once."
    rawKey: String
    apiKey: ApiKeyNode
  }

  type RotateApiKeyResult {
    ok: Boolean!
    "SUCCESS, NOT_FOUND, NOT_ACTIVE, ALREADY_ROTATED or INVALID_GRACE_PERIOD."
    code: String
    message: String
    "The new key itself: returned only here, once."
    rawKey: String
    "The new key: same name and expiry as the one it replaces."
    apiKey: ApiKeyNode
  }

  type RevokeApiKeyResult {
    ok: Boolean!
    code: String
    message: String
  }

  "The signed-in user; \`id\`, \`username\` and \`isOwaspStaff\` are the reference's fields."
  type AuthUserNode {
    "Relay-style global id."
    id: ID!
    "The GitHub login (the reference's name for it)."
    username: String!
    "Listed in OWASP_STAFF_LOGINS."
    isOwaspStaff: Boolean!
    login: String!
    name: String!
    avatarUrl: String!
  }

  type GitHubAuthResult {
    ok: Boolean!
    message: String!
    user: AuthUserNode
  }

  type LogoutResult {
    ok: Boolean!
    code: String
    message: String
  }

  type Query {
    "The signed-in user's valid (not revoked, not expired) keys, newest first."
    apiKeys: [ApiKeyNode!]!
    activeApiKeyCount: Int!
    "The signed-in user's keys revoked in the last 90 days because GitHub found them published, newest first."
    leakedApiKeys: [ApiKeyNode!]!
    "The signed-in user, or null."
    me: AuthUserNode
  }

  type Mutation {
    createApiKey(name: String!, expiresAt: DateTime!): CreateApiKeyResult!
    revokeApiKey(uuid: UUID!): RevokeApiKeyResult!
    """
    Replaces an active key by a new one with the same name and expiry (returned once in rawKey). The old key keeps
    working for gracePeriodHours (0: revoked at once; at most 168), then stops. Allowed at the limit of active keys.
    One key per rotation chain is in grace: the key the old one had replaced, if still in grace, is revoked.
    """
    rotateApiKey(uuid: UUID!, gracePeriodHours: Int!): RotateApiKeyResult!
    "Signs in with a GitHub OAuth access token held by a single-page client; sets the session cookie."
    githubAuth(accessToken: String!): GitHubAuthResult!
    logoutUser: LogoutResult!
  }
`;
