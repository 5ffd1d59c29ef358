// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { EnumSelect } from './enum-select.tsx';

const SIZES = ['small', 'large'] as const;

afterEach(cleanup);

describe('EnumSelect', () => {
  it('lists every value with its label and hands back the value chosen', () => {
    const onChange = vi.fn();
    render(<EnumSelect aria-label="Size" values={SIZES} labelOf={(size) => size.toUpperCase()} value="small" onChange={onChange} />);
    const select = screen.getByRole('combobox', { name: 'Size' });
    expect([...select.querySelectorAll('option')].map((o) => [o.value, o.textContent])).toEqual([
      ['small', 'SMALL'],
      ['large', 'LARGE'],
    ]);
    fireEvent.change(select, { target: { value: 'large' } });
    expect(onChange).toHaveBeenCalledWith('large');
  });

  it('reads the "any" option as undefined', () => {
    const onChange = vi.fn();
    render(<EnumSelect aria-label="Size" values={SIZES} value="large" onChange={onChange} anyLabel="Any size" />);
    const select = screen.getByRole('combobox', { name: 'Size' });
    expect(select.querySelector('option')?.textContent).toBe('Any size');
    fireEvent.change(select, { target: { value: '' } });
    expect(onChange).toHaveBeenCalledWith(undefined);
  });

  it('hands back numbers as numbers', () => {
    const onChange = vi.fn();
    render(<EnumSelect aria-label="Minutes" values={[15, 60]} value={15} onChange={onChange} />);
    fireEvent.change(screen.getByRole('combobox', { name: 'Minutes' }), { target: { value: '60' } });
    expect(onChange).toHaveBeenCalledWith(60);
  });
});
