import type { ComponentProps, ReactNode } from 'react';
import { Select } from './form-controls.tsx';

interface EnumSelectBase<T extends string | number> extends Omit<ComponentProps<'select'>, 'value' | 'onChange' | 'children'> {
  /** Every value the enum has, in the order shown. */
  values: readonly T[];
  /** What an option says; the value itself when left out. */
  labelOf?: (value: T) => ReactNode;
}

interface RequiredChoice<T extends string | number> extends EnumSelectBase<T> {
  value: T;
  onChange: (value: T) => void;
  anyLabel?: undefined;
}

interface OptionalChoice<T extends string | number> extends EnumSelectBase<T> {
  value: T | undefined;
  onChange: (value: T | undefined) => void;
  /** A first option for no value at all ("Any status"): it reads as `undefined`. */
  anyLabel: string;
}

/**
 * A select over an enum's values (statuses, priorities, ranges…): one option per value, and the change handed back
 * as a value of the enum, found among `values` rather than cast from the option's text.
 */
export function EnumSelect<T extends string | number>(props: OptionalChoice<T>): ReactNode;
export function EnumSelect<T extends string | number>(props: RequiredChoice<T>): ReactNode;
export function EnumSelect<T extends string | number>(props: RequiredChoice<T> | OptionalChoice<T>) {
  const { values, labelOf = String, value, onChange, anyLabel, ...selectProps } = props;
  const choose = (raw: string) => {
    const chosen = values.find((v) => String(v) === raw);
    // Every option but the "any" one is a value of `values`, so `chosen` is undefined only where the props allow it.
    if (props.anyLabel !== undefined) props.onChange(chosen);
    else if (chosen !== undefined) props.onChange(chosen);
  };
  return (
    <Select {...selectProps} value={value ?? ''} onChange={(e) => choose(e.target.value)}>
      {anyLabel !== undefined && <option value="">{anyLabel}</option>}
      {values.map((v) => (
        <option key={v} value={v}>
          {labelOf(v)}
        </option>
      ))}
    </Select>
  );
}
