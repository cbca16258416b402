/**
 * The OpenAPI 3.1 document of the three action endpoints, generated from the same TypeBox
 * schemas the dispatcher validates with: one POST path per endpoint whose request body is a
 * `oneOf` of every action, discriminated by `action`.
 */
import type { ActionTable } from '../actions/registry.ts';
import type { Endpoint } from '../contract/action.ts';
import { ERROR_CODES } from '../contract/errors.ts';

const SECURITY: Record<string, string> = { bot: 'botKey', merchant: 'merchantKey', owner: 'ownerToken' };

/** Builds the document for the actions in `table`. */
export function openApiDocument(table: ActionTable, version: string, serverUrl: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const endpoint of Object.keys(table) as Endpoint[]) {
    const entries = [...table[endpoint].values()];
    if (entries.length === 0) continue;
    const refs: Record<string, string> = {};
    for (const e of entries) {
      const schemaName = `${endpoint}_${e.name}`;
      const params = e.contract.params as unknown as { properties?: Record<string, unknown>; required?: string[] };
      schemas[schemaName] = {
        type: 'object',
        description: e.contract.summary,
        additionalProperties: false,
        required: ['action', ...(params.required ?? [])],
        properties: { action: { const: e.name }, ...(params.properties ?? {}) },
        'x-auth': e.contract.auth,
        ...(e.contract.allowUnclaimed ? { 'x-allow-unclaimed': true } : {}),
        ...(e.contract.idempotent ? { 'x-idempotent': true } : {}),
      };
      refs[e.name] = `#/components/schemas/${schemaName}`;
    }
    const auths = new Set(entries.map((e) => e.contract.auth));
    paths[`/${endpoint}`] = {
      post: {
        summary: `${endpoint} actions`,
        description: entries.map((e) => `- \`${e.name}\` (${e.contract.auth === 'none' ? 'no auth' : `${e.contract.auth} key`}): ${e.contract.summary}`).join('\n'),
        security: [...auths].map((a) => (a === 'none' ? {} : { [SECURITY[a]!]: [] })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { oneOf: Object.values(refs).map(($ref) => ({ $ref })), discriminator: { propertyName: 'action', mapping: refs } },
            },
          },
        },
        responses: {
          '200': { description: 'Success envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Success' } } } },
          default: { description: 'Error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    };
  }
  schemas.Success = { type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data: { type: 'object' } } };
  schemas.Error = {
    type: 'object',
    required: ['success', 'error'],
    properties: {
      success: { const: false },
      error: {
        type: 'object',
        required: ['code', 'message', 'how_to_fix'],
        properties: { code: { enum: [...ERROR_CODES] }, message: { type: 'string' }, how_to_fix: { type: 'string' } },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'Agent Wallet Service', version },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        botKey: { type: 'http', scheme: 'bearer', description: 'wallet_bot_… key returned by register' },
        merchantKey: { type: 'http', scheme: 'bearer', description: 'wallet_merchant_… key returned by merchant register' },
        ownerToken: { type: 'http', scheme: 'bearer', description: 'wallet_owner_… token minted by the owner' },
      },
    },
  };
}
