// Runs a docs block that configures CloudKit JS, in Node, against ckfs serve
// (scripts/doc-harness/web-client starts it). CloudKit JS itself comes from Apple's CDN,
// which no package registry carries, so a stand-in takes the block's configuration; the part
// of it that is ckfs's to get right, the `services.fetch` hook, is then called as CloudKit JS
// calls it in Node: with the URL of Apple's server and the request, and no third argument.
const fs = require('fs');
const API_TOKEN = process.env.CKFS_API_TOKEN;
const WEB_TOKEN = process.env.CKFS_WEB_TOKEN;
let configured;
const CloudKit = { configure(config) { configured = config; return { getDefaultContainer() { return {}; } }; } };
eval(fs.readFileSync(process.argv[2], 'utf8'));
(async () => {
  const url = 'https://api.apple-cloudkit.com/database/1/iCloud.local.ckfs/development/public/records/query?ckAPIToken=' +
    encodeURIComponent(API_TOKEN);
  const options = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query: { recordType: 'Note' } }) };
  const answer = await configured.services.fetch(url, options);
  const body = await answer.json();
  if (answer.status !== 200 || !Array.isArray(body.records) || body.records.length !== 1) {
    console.error('records/query through services.fetch:', answer.status, JSON.stringify(body));
    process.exit(1);
  }
  console.log('records/query through the services.fetch hook answered 200');
})().catch((e) => { console.error(e); process.exit(1); });
