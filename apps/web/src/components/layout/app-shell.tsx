import { useEffect, useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import type { Principal } from '@inferq/contracts';
import { useSignOut } from '../../auth/use-auth.ts';
import { Button } from '../ui/button.tsx';
import { shortId } from '../../lib/format.ts';
import { navItemsFor } from './nav-items.ts';

const linkClass = ({ isActive }: { isActive: boolean }) =>
  `block rounded-md px-3 py-2 text-sm font-medium ${isActive ? 'bg-white/15 text-white' : 'text-indigo-100 hover:bg-white/10 hover:text-white'}`;

/** Header with the main navigation (a menu button on narrow screens) around the current page. */
export function AppShell({ principal }: { principal: Principal }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  const signOut = useSignOut();
  useEffect(() => setMenuOpen(false), [location.pathname]);

  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:m-2 focus:rounded focus:bg-white focus:p-2">
        Skip to content
      </a>
      <header className="bg-brand text-white shadow">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <span className="text-lg font-semibold tracking-tight">inferq</span>
          <Button
            variant="ghost"
            size="sm"
            className="ml-auto text-white hover:bg-white/10 md:hidden"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </Button>
          <nav id="main-nav" aria-label="Main" className={`${menuOpen ? 'block' : 'hidden'} w-full md:block md:w-auto`}>
            <ul className="flex flex-col gap-1 md:flex-row">
              {navItemsFor(principal).map((item) => (
                <li key={item.to}>
                  <NavLink to={item.to} end={item.to === '/'} className={linkClass}>
                    {item.label}
                  </NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <div className={`${menuOpen ? 'flex' : 'hidden'} w-full items-center gap-3 md:ml-auto md:flex md:w-auto`}>
            <span className="font-mono text-xs text-indigo-100" title={`Key ${principal.keyId}`}>
              key {shortId(principal.keyId)}
            </span>
            {principal.admin && <span className="rounded-full bg-white/15 px-2 py-0.5 text-xs font-medium">admin</span>}
            <Button variant="ghost" size="sm" className="text-white hover:bg-white/10" onClick={signOut}>
              Sign out
            </Button>
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-7xl px-4 py-6 sm:py-8">
        <Outlet />
      </main>
    </div>
  );
}
