import type { ComponentProps } from 'react';
import { cva, type VariantProps } from 'class-variance-authority';

export const buttonStyles = cva(
  'inline-flex items-center justify-center gap-2 rounded-md font-medium transition-colors disabled:cursor-not-allowed disabled:opacity-50',
  {
    variants: {
      variant: {
        primary: 'bg-brand text-white shadow-sm hover:bg-brand/90',
        secondary: 'bg-white text-slate-800 shadow-sm ring-1 ring-inset ring-slate-300 hover:bg-slate-50',
        danger: 'bg-white text-tone-danger shadow-sm ring-1 ring-inset ring-tone-danger/40 hover:bg-tone-danger/5',
        ghost: 'text-slate-700 hover:bg-slate-100',
      },
      size: { sm: 'px-2.5 py-1 text-sm', md: 'px-3.5 py-2 text-sm' },
    },
    defaultVariants: { variant: 'secondary', size: 'md' },
  },
);

type ButtonProps = ComponentProps<'button'> & VariantProps<typeof buttonStyles>;

export function Button({ variant, size, className, type = 'button', ...props }: ButtonProps) {
  return <button type={type} className={buttonStyles({ variant, size, className })} {...props} />;
}
