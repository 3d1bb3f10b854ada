/** The widget's styles, inside its shadow root: `all: initial` on the host keeps the page's inherited styles out. */
export const STYLES = `
:host{all:initial;position:fixed;z-index:2147483000;bottom:20px;right:20px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;--svc-color:#6366f1;--svc-width:400px;--svc-height:580px}
:host([data-position=bottom-left]){right:auto;left:20px}
*{box-sizing:border-box}
.panel,.launcher{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;text-align:left;letter-spacing:normal}
[hidden]{display:none!important}
button{font:inherit;cursor:pointer}
button:focus-visible,input:focus-visible{outline:3px solid var(--svc-color);outline-offset:2px}
.launcher{width:56px;height:56px;border-radius:50%;border:0;background:var(--svc-color);color:#fff;box-shadow:0 6px 20px rgba(0,0,0,.25);display:grid;place-items:center;margin-left:auto}
:host([data-position=bottom-left]) .launcher{margin-left:0}
.launcher svg{width:26px;height:26px}
.panel{position:absolute;bottom:72px;right:0;width:var(--svc-width);height:var(--svc-height);max-width:calc(100vw - 40px);max-height:calc(100vh - 112px);background:#fff;border-radius:16px;box-shadow:0 12px 40px rgba(0,0,0,.22);display:flex;flex-direction:column;overflow:hidden}
:host([data-position=bottom-left]) .panel{right:auto;left:0}
.header{display:flex;align-items:center;gap:10px;padding:14px 16px;background:var(--svc-color);color:#fff}
.logo{width:36px;height:36px;border-radius:50%;object-fit:cover;background:#fff}
.titles{display:flex;flex-direction:column;flex:1;min-width:0}
.title{font-size:16px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.subtitle{font-size:12px;opacity:.85}
.subtitle:empty{display:none}
.close{border:0;background:transparent;color:#fff;font-size:24px;line-height:1;padding:4px 8px;border-radius:8px}
.tabs{display:flex;border-bottom:1px solid #e5e7eb}
.tabs button{flex:1;border:0;background:#fff;padding:10px;color:#4b5563;border-bottom:2px solid transparent}
.tabs button[aria-selected=true]{color:var(--svc-color);border-bottom-color:var(--svc-color);font-weight:600}
.error{margin:10px 12px 0;padding:10px 12px;border-radius:10px;background:#fef2f2;color:#991b1b;border:1px solid #fecaca}
.view{flex:1;display:flex;flex-direction:column;min-height:0}
.messages,.transcripts{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:8px}
.bubble{max-width:85%;padding:9px 12px;border-radius:14px;white-space:pre-wrap;word-wrap:break-word}
.bubble.assistant{background:#f3f4f6;align-self:flex-start;border-bottom-left-radius:4px}
.bubble.user{background:var(--svc-color);color:#fff;align-self:flex-end;border-bottom-right-radius:4px}
.bubble.tool{align-self:flex-start;font-size:12px;color:#6b7280;font-style:italic;padding:2px 4px}
.bubble.pending:empty::after{content:"…";animation:svc-blink 1s infinite}
@keyframes svc-blink{50%{opacity:.2}}
.composer{display:flex;gap:8px;padding:10px 12px;border-top:1px solid #e5e7eb}
.input{flex:1;min-width:0;border:1px solid #d1d5db;border-radius:10px;padding:9px 12px;font:inherit;color:inherit;background:#fff}
.send{border:0;border-radius:10px;padding:0 14px;background:var(--svc-color);color:#fff}
.send:disabled,.input:disabled{opacity:.55;cursor:default}
.voice{align-items:center;padding-top:24px}
.mic{width:88px;height:88px;border-radius:50%;border:0;background:var(--svc-color);color:#fff;display:grid;place-items:center;box-shadow:0 6px 20px rgba(0,0,0,.2)}
.mic svg{width:40px;height:40px}
.mic[aria-pressed=true]{animation:svc-pulse 1.4s infinite}
@keyframes svc-pulse{50%{box-shadow:0 0 0 14px rgba(0,0,0,.06)}}
.voice-status{margin:12px;color:#4b5563}
.transcripts{width:100%}
@media (prefers-reduced-motion:reduce){.mic[aria-pressed=true],.bubble.pending:empty::after{animation:none}}
`;
