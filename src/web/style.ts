/** The one stylesheet of the pages (served at /static/style.css): readable, fluid, visible focus. */
export const STYLE_CSS = `
:root { --fg: #1b1f24; --muted: #57606a; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de; --accent: #0b57d0; --ok: #116329; --bad: #a40e26; --warn: #7d4e00; }
* { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
.skip { position: absolute; left: -999px; top: 0; background: var(--accent); color: #fff; padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
header.site { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.site nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }
.brand { font-weight: 700; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
a { color: var(--accent); }
a[aria-current="page"] { font-weight: 700; text-decoration: none; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.muted { color: var(--muted); }
.mono, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: minmax(7rem, max-content) 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 1rem 0; }
.notice { border-left: 4px solid var(--ok); background: #eef8f0; padding: .75rem 1rem; margin: 1rem 0; }
.errors { border-left: 4px solid var(--bad); background: #fdf0f2; padding: .75rem 1rem; margin: 1rem 0; }
.errors ul { margin: .25rem 0 0; padding-left: 1.25rem; }
.warning { border-left: 4px solid var(--warn); background: #fff8e6; padding: .75rem 1rem; margin: 1rem 0; }
/* An announced sweep of the whole balance: red, first on the page, impossible to scroll past unseen. */
.alarm { background: var(--bad); color: #fff; border-radius: 8px; padding: 1rem 1.25rem; margin: 0 0 1.25rem; }
.alarm h2 { margin: 0 0 .5rem; font-size: 1.2rem; }
.alarm p { margin: 0 0 .75rem; }
.alarm code { color: #fff; }
.alarm .actions { align-items: center; }
.alarm button { background: #fff; color: var(--bad); border-color: #fff; }
.alarm a { color: #fff; }
.next { margin-top: 1.5rem; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: .5rem 0 1rem; }
table { border-collapse: collapse; width: 100%; min-width: 32rem; }
th, td { text-align: left; padding: .5rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; background: var(--panel); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.status { display: inline-block; padding: 0 .4rem; border-radius: 4px; background: var(--panel); border: 1px solid var(--line); font-size: .875rem; }
.status-approved, .status-completed, .status-claimed { color: var(--ok); }
.status-rejected, .status-failed, .status-expired, .status-cancelled { color: var(--bad); }
.status-pending, .status-awaiting_approval { color: var(--warn); }
form.stack { display: grid; gap: 1rem; max-width: 40rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem 1rem; margin: 0; display: grid; gap: .75rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.field { display: grid; gap: .25rem; }
.grid2 { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); }
label { font-weight: 500; }
.hint { color: var(--muted); font-size: .875rem; }
input[type="text"], input[type="email"], input[type="number"], select, textarea {
  font: inherit; width: 100%; padding: .5rem .6rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--fg); min-height: 2.75rem;
}
textarea { min-height: 6rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
input[aria-invalid="true"] { border-color: var(--bad); }
.check { display: flex; gap: .5rem; align-items: center; }
.check input { width: 1.25rem; height: 1.25rem; }
button, .button { font: inherit; font-weight: 600; padding: .55rem 1.1rem; min-height: 2.75rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
button.link { background: none; border: none; color: var(--accent); padding: 0; min-height: 0; font-weight: 400; text-decoration: underline; }
form.inline { display: inline; margin: 0; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.token { display: block; padding: .75rem; background: #fff; border: 1px dashed var(--accent); border-radius: 6px; overflow-wrap: anywhere; }
ul.audit li { overflow-wrap: anywhere; margin-bottom: .25rem; }
details summary { cursor: pointer; font-weight: 600; margin: .5rem 0; }
details.edit { border: 1px solid var(--line); border-radius: 8px; padding: .25rem 1rem; margin: 1rem 0; }
details.edit[open] { padding-bottom: 1rem; }
details.edit > summary { color: var(--accent); }
h1 .handle { font-size: 1rem; font-weight: 400; margin-left: .5rem; }
/* The money first: the balance as the page's headline figure, its facts beside it. */
.money { display: flex; flex-wrap: wrap; gap: 1rem 2.5rem; align-items: flex-start; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 0 0 1rem; }
.money .label { margin: 0; color: var(--muted); font-size: .875rem; text-transform: uppercase; letter-spacing: .04em; }
.money .amount { margin: 0; font-size: 2.25rem; font-weight: 700; line-height: 1.2; font-variant-numeric: tabular-nums; }
.money .amount .unit { font-size: 1.1rem; font-weight: 600; color: var(--muted); }
.money dl.facts { margin: 0; flex: 1 1 20rem; }
dl.facts dd.num { font-variant-numeric: tabular-nums; }
nav.sections { display: flex; flex-wrap: wrap; gap: .25rem; border-bottom: 1px solid var(--line); margin: 1rem 0 0; padding-bottom: .5rem; }
nav.sections a { padding: .3rem .75rem; border-radius: 6px; text-decoration: none; border: 1px solid var(--line); background: #fff; }
nav.sections a:hover { background: var(--panel); }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; background: #fff8e6; border: 1px solid var(--warn); color: var(--warn); font-weight: 600; font-size: .875rem; text-decoration: none; }
caption { text-align: left; padding: .25rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
/* Checkout: the total is the headline; the order panel is a compact list that fits a phone. */
h1.headline { margin: .5rem 0 .25rem; }
h1.headline .label { display: block; font-size: 1rem; font-weight: 600; color: var(--muted); }
h1.headline .amount { display: block; font-size: 2.5rem; line-height: 1.15; font-variant-numeric: tabular-nums; }
h1.headline .amount.void { text-decoration: line-through; color: var(--muted); }
.due { margin: .75rem 0; }
.panel.order { padding: .75rem 1rem; }
.panel.order > :first-child { margin-top: 0; }
.order-for { font-weight: 600; margin: 0 0 .5rem; }
table.lines { min-width: 0; }
table.lines th, table.lines td { padding: .4rem .25rem; }
table.lines thead th { background: none; color: var(--muted); font-weight: 500; font-size: .875rem; }
table.lines tfoot th, table.lines tfoot td { border-bottom: none; background: none; font-size: 1.05rem; }
/* Checkout: "Open in wallet" and the copyable amount and address first; the QR code (for another device) beside them on wide screens, below them on phones. */
section.pay h2 { margin-top: 1.25rem; }
.pay-grid { display: grid; gap: 0 2rem; }
.pay-here .actions { margin: 0 0 .25rem; }
.pay-here .button { font-size: 1.1rem; padding: .7rem 1.5rem; }
.qr-block .qr-caption { margin: .5rem 0 .25rem; color: var(--muted); font-size: .875rem; }
.qr svg { display: block; max-width: 100%; height: auto; }
.copyable { -webkit-user-select: all; user-select: all; }
button.copy { min-height: 2.25rem; padding: .25rem .75rem; font-size: .875rem; margin-left: .25rem; }
@media (min-width: 40.01rem) { .pay-grid { grid-template-columns: 1fr auto; } .qr-block { grid-column: 2; grid-row: 1; } }
/* The payer's receipt: the facts, then the signed form as one selectable block. */
pre.jws { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-all; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; font-size: .8rem; -webkit-user-select: all; user-select: all; }
ol.steps li { margin-bottom: .5rem; overflow-wrap: anywhere; }
/* Spending at a glance: budget bars (SVG drawn by attributes, so they show with CSS off) and the 30-day chart. */
ul.budgets { list-style: none; padding: 0; margin: 0 0 .5rem; display: grid; gap: .75rem; max-width: 40rem; }
ul.budgets li { display: flex; flex-wrap: wrap; gap: .1rem .5rem; align-items: baseline; }
ul.budgets svg.bar { display: block; flex: 1 0 100%; height: .75rem; border-radius: 3px; }
figure.chart { margin: 1rem 0 .25rem; max-width: 40rem; }
svg.chart { display: block; width: 100%; height: 8rem; }
figure.chart .chart-top, figure.chart .chart-axis { margin: 0; font-size: .8rem; color: var(--muted); }
figure.chart .chart-axis { display: flex; justify-content: space-between; }
figure.chart figcaption { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; font-size: .875rem; margin-top: .25rem; }
figure.chart .key svg { vertical-align: -1px; }
table.daily { min-width: 0; max-width: 24rem; }
table.daily th, table.daily td { padding: .2rem .5rem; }
details.numbers summary { font-weight: 500; font-size: .9rem; }
.phone-only { display: none; }
table.history td.h-when, table.history td.h-amount { white-space: nowrap; }
/* Wide screens: an approval's amount + fee = total on one line; recipient and time keep readable widths. */
@media (min-width: 40.01rem) {
  table.approvals td.amount { white-space: nowrap; }
  table.approvals td.to { min-width: 10rem; }
  table.approvals td.why { min-width: 16rem; }
}
table.approvals td.why p { margin: 0 0 .25rem; }
/* Phones: table rows become cards, each cell labelled by its column (data-label). */
@media (max-width: 40rem) {
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: 100%; min-width: 0; }
  table.cards thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.cards tr { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; margin-bottom: .75rem; }
  table.cards td { border: none; padding: .2rem 0; text-align: left; }
  table.cards td::before { content: attr(data-label); display: block; font-size: .8rem; color: var(--muted); }
  table.cards td.mono { overflow-wrap: anywhere; }
  /* A caption of a table shown as cards is a block line, not a shrink-to-fit column one word wide. */
  table.cards caption, table.history caption { display: block; width: auto; }
  /* The history as a compact list: when and amount on one line, what, status and fees on the next, the counterparty below. */
  table.history, table.history tbody { display: block; min-width: 0; }
  table.history thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.history tr { display: grid; grid-template-columns: 1fr auto; gap: 0 .75rem; padding: .4rem 0; border-bottom: 1px solid var(--line); }
  table.history td { display: block; border: none; padding: 0; min-width: 0; }
  table.history td.h-when { grid-area: 1 / 1; }
  table.history td.h-amount { grid-area: 1 / 2; font-weight: 600; }
  table.history td.h-what { grid-area: 2 / 1; }
  table.history td.h-status { grid-area: 2 / 2; text-align: right; }
  table.history td.h-who { grid-area: 3 / 1; font-size: .8rem; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  table.history td.h-fees { grid-area: 3 / 2; font-size: .8rem; color: var(--muted); }
  .phone-only { display: inline; }
}
/* The passkey step (src/web/passkey-script.ts): what the prompt is doing, or why nothing was done. */
.passkey-status { margin: .5rem 0 0; font-size: .9rem; }
.passkey-status.bad { color: var(--bad); font-weight: 600; }
form.inline .passkey-status { display: block; }
pre.command { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
@media (max-width: 30rem) { main { padding: .75rem; } h1 { font-size: 1.35rem; } dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .5rem; } }
`;

/** The pages' icon: a wallet-green rounded square with a W (served at /favicon.svg and /favicon.ico, which browsers ask for unprompted). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0f766e"/><path d="M7 10l3.2 12h1.6L16 13l4.2 9h1.6L25 10h-2.4l-2 8-3.8-8h-1.6l-3.8 8-2-8z" fill="#fff"/></svg>`;
