import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_KEY_ID, EXAMPLE_REQUEST_ID } from './examples.ts';
import { FiniteInteger } from './request-values.ts';

/** What the audit log records: every admin action. */
export const AuditAction = {
  KeyCreated: 'key:created',
  KeyRevoked: 'key:revoked',
  KeyUpdated: 'key:updated',
  ModelUploaded: 'model:uploaded',
  ModelRouted: 'model:routed',
  ModelPaused: 'model:paused',
  ModelResumed: 'model:resumed',
  ModelRetired: 'model:retired',
  ModelRetentionSet: 'model:retention-set',
  JobDeleted: 'job:deleted',
  JobsBulkCanceled: 'jobs:bulk-canceled',
  JobsBulkRetried: 'jobs:bulk-retried',
} as const;
export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];
export const AUDIT_ACTIONS = Object.values(AuditAction);

export const AuditEntrySchema = Type.Object({
  id: Type.Integer(),
  actorKeyId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The key that acted; null for the server itself' }),
  action: StringEnum(AUDIT_ACTIONS),
  resource: Type.String({
    description:
      'What was acted on: `keys/<id>`, `models/<name>:<version>` (upload, retire one version), ' +
      '`models/<name>` (routing, pause, resume, retention, retire every version), `jobs/<id>` (delete) or `jobs` (bulk cancel and retry)',
    examples: ['models/mlp:2'],
  }),
  details: Type.Record(Type.String(), Type.Unknown(), { description: 'The request id and what changed' }),
  createdAt: Type.String({ format: 'date-time' }),
});
export type AuditEntry = Static<typeof AuditEntrySchema>;

export const ListAuditQuerySchema = Type.Object(
  {
    limit: Type.Optional(FiniteInteger({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor from nextCursor' })),
  },
  { additionalProperties: false },
);
export type ListAuditQuery = Static<typeof ListAuditQuerySchema>;

export const AuditListSchema = Type.Object(
  {
    items: Type.Array(AuditEntrySchema),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  {
    // A page of one (`limit=1`), so there is a next page to point at.
    examples: [
      {
        items: [
          {
            id: 42,
            actorKeyId: EXAMPLE_KEY_ID,
            action: 'model:routed',
            resource: 'models/mlp',
            details: {
              requestId: EXAMPLE_REQUEST_ID,
              versions: [
                { version: 1, weight: 90 },
                { version: 2, weight: 10 },
              ],
            },
            createdAt: '2025-06-02T09:00:00.000Z',
          },
        ],
        nextCursor: 'NDI',
      },
    ],
  },
);
