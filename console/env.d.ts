// esbuild bundles imported stylesheets into the page's CSS file; they export nothing.
declare module '*.css';
