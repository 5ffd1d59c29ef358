import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, parseWebhookUrl, refusedRange } from './url-policy.ts';

describe('refusedRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['::', 'unspecified'],
    ['::ffff:10.0.0.1', 'private'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111'])('allows public %s', (address) => {
    expect(refusedRange(address)).toBeUndefined();
  });
});

describe('parseWebhookUrl and checkWebhookUrl', () => {
  it('allows only http and https', () => {
    expect(() => parseWebhookUrl('file:///etc/passwd', true)).toThrow(expect.objectContaining({ code: 'WEBHOOK_URL_REFUSED' }));
    expect(parseWebhookUrl('https://8.8.8.8/x', false).host).toBe('8.8.8.8');
  });

  it('refuses a name that resolves to loopback unless private addresses are allowed', async () => {
    await expect(checkWebhookUrl('http://localhost/hook', false)).rejects.toMatchObject({ code: 'WEBHOOK_URL_REFUSED' });
    await expect(checkWebhookUrl('http://localhost/hook', true)).resolves.toBeUndefined();
  });
});
