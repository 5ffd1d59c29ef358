import { createHmac } from 'node:crypto';

// Standard Webhooks signatures (https://www.standardwebhooks.com), so receivers
// can verify with existing libraries: the secret is `whsec_<base64 key>`, the
// signature `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`.

/** Each API key gets its own key, derived from the server secret, so a tenant can verify only its own deliveries. */
export const deriveSigningKey = (serverSecret: string, keyId: string): Buffer => createHmac('sha256', serverSecret).update(`webhook-signing:${keyId}`).digest();

export const formatSigningSecret = (key: Buffer): string => `whsec_${key.toString('base64')}`;

export const signWebhook = (key: Buffer, id: string, timestampS: number, body: string): string =>
  `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
