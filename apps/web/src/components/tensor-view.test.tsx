// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { TensorView } from './tensor-view.tsx';

afterEach(cleanup);

describe('TensorView', () => {
  it('shows the header and every value of a small tensor', () => {
    render(<TensorView name="logits" datatype="FP32" shape={[2, 2]} bytes={16} data={[0.5, 1, -2.25, 3]} />);
    expect(screen.getByText('logits')).toBeTruthy();
    expect(screen.getByText(/FP32 · shape \[2, 2\] · 4 values/)).toBeTruthy();
    expect(screen.getByLabelText('Values of logits').textContent).toBe('[[0.5, 1],\n [-2.25, 3]]');
    expect(screen.queryByRole('button', { name: /show all/i })).toBeNull();
  });

  it('summarises a large tensor until "Show all" is pressed', () => {
    const data = Array.from({ length: 1000 }, (_, i) => i);
    render(<TensorView name="pooled" datatype="INT32" shape={[1000]} bytes={4000} data={data} />);
    const values = screen.getByLabelText('Values of pooled');
    expect(values.textContent).toBe('[0, 1, 2, …, 997, 998, 999]');
    fireEvent.click(screen.getByRole('button', { name: 'Show all 1,000 values' }));
    expect(values.textContent).toContain('500, 501');
    expect(screen.getByRole('button', { name: 'Show summary' }).getAttribute('aria-expanded')).toBe('true');
  });
});
