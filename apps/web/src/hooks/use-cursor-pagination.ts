import { useState } from 'react';

/**
 * Next/Previous over an opaque-cursor list: a stack of the cursors that led to
 * the current page. A new `resetKey` (changed filters) starts again at page 1.
 */
export function useCursorPagination(resetKey: string) {
  const [state, setState] = useState({ resetKey, stack: [] as string[] });
  let { stack } = state;
  if (state.resetKey !== resetKey) {
    stack = [];
    setState({ resetKey, stack });
  }
  return {
    cursor: stack.at(-1),
    page: stack.length + 1,
    hasPrevious: stack.length > 0,
    next: (cursor: string) => setState((s) => ({ ...s, stack: [...s.stack, cursor] })),
    previous: () => setState((s) => ({ ...s, stack: s.stack.slice(0, -1) })),
  };
}
