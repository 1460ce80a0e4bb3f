// The OWASP Nest frontend's GraphQL documents, verbatim (the text inside its gql`` templates) from
// OWASP/Nest@e2c741024a77bc61320dd254cad9fe7f55065d6d: frontend/src/server/queries/authQueries.ts and apiKeyQueries.ts.
// They are the client's side of the interface; the tests send them exactly as the frontend does.

export const LOGOUT_DJANGO_MUTATION = `
  mutation LogoutDjango {
    logoutUser {
      code
      message
      ok
    }
  }
`;

export const SYNC_DJANGO_SESSION_MUTATION = `
  mutation SyncDjangoSession($accessToken: String!) {
    githubAuth(accessToken: $accessToken) {
      message
      ok
      user {
        id
        isOwaspStaff
      }
    }
  }
`;

export const GET_API_KEYS = `
  query GetApiKeys {
    activeApiKeyCount
    apiKeys {
      id
      createdAt
      expiresAt
      isRevoked
      name
      uuid
    }
  }
`;

export const CREATE_API_KEY = `
  mutation CreateApiKey($name: String!, $expiresAt: DateTime!) {
    createApiKey(name: $name, expiresAt: $expiresAt) {
      apiKey {
        id
        createdAt
        expiresAt
        isRevoked
        name
        uuid
      }
      code
      message
      ok
      rawKey
    }
  }
`;

export const REVOKE_API_KEY = `
  mutation RevokeApiKey($uuid: UUID!) {
    revokeApiKey(uuid: $uuid) {
      code
      message
      ok
    }
  }
`;
