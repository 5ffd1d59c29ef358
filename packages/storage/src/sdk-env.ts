// The one place the storage package touches the process environment.

/**
 * The SDK warns once per process that Node 20 is past its support window. The
 * SDK's own switch is this variable; an explicit value from the operator wins.
 */
export function silenceNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
