import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_JOB_ID } from './examples.ts';

/** A job's webhook: pending until delivered (a 2xx answer) or given up after the last attempt. */
export const WebhookState = { Pending: 'pending', Delivered: 'delivered', GivenUp: 'given_up' } as const;
export type WebhookState = (typeof WebhookState)[keyof typeof WebhookState];
export const WEBHOOK_STATES = Object.values(WebhookState);

/**
 * The Standard Webhooks headers every delivery carries (https://www.standardwebhooks.com):
 * `webhook-id` is the job id (the same on every attempt, so receivers can drop
 * repeats), `webhook-timestamp` is unix seconds, `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
 */
export const WebhookHeader = { Id: 'webhook-id', Timestamp: 'webhook-timestamp', Signature: 'webhook-signature' } as const;

export const WebhookDeliverySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  attempt: Type.Integer({ minimum: 1 }),
  url: Type.String(),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when no answer came" }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed without an answer (timeout, refused address, connection error)' }),
  durationMs: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

const exampleWebhookUrl = 'https://hooks.example.com/inferq';

export const WebhookDeliveriesSchema = Type.Object(
  {
    url: Type.Union([Type.String(), Type.Null()], { description: 'The webhook URL; null when the job names none' }),
    state: Type.Union([StringEnum(WEBHOOK_STATES), Type.Null()]),
    attempts: Type.Integer(),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the next attempt is due, while pending after a failure',
    }),
    items: Type.Array(WebhookDeliverySchema, { description: 'Every attempt, oldest first' }),
  },
  {
    // Delivered on the second attempt, after the receiver answered 503.
    examples: [
      {
        url: exampleWebhookUrl,
        state: 'delivered',
        attempts: 2,
        nextAttemptAt: null,
        items: [
          { id: EXAMPLE_JOB_ID, attempt: 1, url: exampleWebhookUrl, statusCode: 503, error: null, durationMs: 41, createdAt: '2025-06-02T09:30:00.050Z' },
          { id: EXAMPLE_JOB_ID, attempt: 2, url: exampleWebhookUrl, statusCode: 200, error: null, durationMs: 38, createdAt: '2025-06-02T09:30:05.060Z' },
        ],
      },
    ],
  },
);
export type WebhookDeliveries = Static<typeof WebhookDeliveriesSchema>;

export const WebhookSecretSchema = Type.Object(
  { secret: Type.String({ description: 'whsec_<base64 key>: verifies the signatures of deliveries for jobs this API key submitted' }) },
  { examples: [{ secret: 'whsec_XJL/oiuO7xf4nK2QvKpk6RqS2I5On49Zwt2mKZ0ufUQ=' }] },
);
export type WebhookSecret = Static<typeof WebhookSecretSchema>;
