import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';

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

export const WebhookDeliveriesSchema = Type.Object({
  url: Type.Union([Type.String(), Type.Null()], { description: 'The webhook URL; null when the job names none' }),
  state: Type.Union([StringEnum(WEBHOOK_STATES), Type.Null()]),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next attempt is due, while pending after a failure' }),
  items: Type.Array(WebhookDeliverySchema, { description: 'Every attempt, oldest first' }),
});
export type WebhookDeliveries = Static<typeof WebhookDeliveriesSchema>;

export const WebhookSecretSchema = Type.Object({
  secret: Type.String({ description: 'whsec_<base64 key>: verifies the signatures of deliveries for jobs this API key submitted' }),
});
export type WebhookSecret = Static<typeof WebhookSecretSchema>;
