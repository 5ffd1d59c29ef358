import { defineConfig, loadEnv } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';

// In production the API serves dist/ at / (same origin); in development the
// dev server forwards the API's paths to it.
const API_PATHS = ['/v1', '/healthz', '/readyz', '/docs'];

export default defineConfig(({ mode }) => {
  const apiUrl = loadEnv(mode, '.', 'INFERQ_').INFERQ_API_URL ?? 'http://127.0.0.1:8080';
  const proxy = Object.fromEntries(API_PATHS.map((path) => [path, { target: apiUrl }]));
  return {
    plugins: [react(), tailwindcss()],
    server: { proxy },
    preview: { proxy },
    build: { outDir: 'dist', emptyOutDir: true },
  };
});
