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
  }

  type CreateApiKeyResult {
    ok: Boolean!
    code: String
    message: String
    "The key itself: returned only here, once."
    rawKey: String
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
    "The signed-in user, or null."
    me: AuthUserNode
  }

  type Mutation {
    createApiKey(name: String!, expiresAt: DateTime!): CreateApiKeyResult!
    revokeApiKey(uuid: UUID!): RevokeApiKeyResult!
    "Signs in with a GitHub OAuth access token held by a single-page client; sets the session cookie."
    githubAuth(accessToken: String!): GitHubAuthResult!
    logoutUser: LogoutResult!
  }
`;
