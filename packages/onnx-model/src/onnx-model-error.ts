export type OnnxModelErrorCode = 'MODEL_INVALID' | 'MODEL_UNSUPPORTED';

/**
 * The only error `readOnnxSignature` throws. Its codes are entries of the
 * contracts error catalogue, so callers can map it to a 422 without a lookup.
 */
export class OnnxModelError extends Error {
  override readonly name = 'OnnxModelError';
  readonly code: OnnxModelErrorCode;

  constructor(code: OnnxModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
