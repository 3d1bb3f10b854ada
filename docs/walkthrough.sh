#!/usr/bin/env bash
# The guide (docs/guide.md), "A walk through the API with curl", as a script that CI runs on a fresh
# platform (test/integration/walkthrough.test.ts), so the guide cannot drift from what works: its
# walkthrough blocks are the sections below (`# == name`), copied by `npm run docs:walkthrough`.
#
#   BASE=http://127.0.0.1:8787 bash docs/walkthrough.sh     # from any directory
#
# BASE defaults to the local platform; ADMIN (the operator token) to the .data/admin-token that
# `npm start` writes in this checkout. Needs curl and jq. The source files it writes go to a
# temporary directory, removed at the end.

# == preamble
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${BASE:-http://127.0.0.1:8787}
if [ -z "${ADMIN:-}" ]; then
  if [ ! -r "$REPO/.data/admin-token" ]; then
    echo "No ADMIN token: set ADMIN, or start the platform in $REPO once (it writes .data/admin-token)." >&2
    exit 1
  fi
  ADMIN=$(cat "$REPO/.data/admin-token")
fi
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "The walkthrough needs $tool (apt-get install $tool)." >&2; exit 1; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# The walkthrough's `curl` shows each answer (pretty JSON when it is JSON) and stops the script on
# any status but 2xx, or but EXPECT's for a step that shows an error (`EXPECT=403 curl ...`).
# Inside `$(...)` it also hands the raw body on, so ids are read with jq.
exec 3>&1
curl() {
  local body status method=GET url='' prev='' arg
  for arg in "$@"; do
    if [ "$prev" = -X ]; then method=$arg; fi
    case $arg in http://* | https://*) url=$arg ;; esac
    prev=$arg
  done
  body=$(mktemp -p "$WORK")
  status=$(command curl -sS -o "$body" -w '%{http_code}' "$@")
  printf '\n$ curl -X %s %s\n-> HTTP %s\n' "$method" "$url" "$status" >&3
  jq . "$body" >&3 2>/dev/null || { cat "$body" && echo; } >&3
  case " ${EXPECT:-200 201 202 204} " in
    *" $status "*) ;;
    *)
      echo "walkthrough: $method $url answered HTTP $status, expected ${EXPECT:-2xx}" >&2
      return 1
      ;;
  esac
  # Same file as the script's output: shown already. Otherwise a pipe or `$(...)` reads it.
  if ! [ /dev/fd/1 -ef /dev/fd/3 ]; then cat "$body"; fi
}

# == accounts
# Where everything lives (public)
curl $BASE/.well-known/platform.json

# Create a user as the operator: the answer holds the user's first token and legacy secret key,
# shown only this once
BOB=$(curl -X POST $BASE/admin/users -H "Authorization: Bearer $ADMIN" \
  -H 'content-type: application/json' -d '{"email":"bob@example.com","credits":100}')
TOKEN=$(jq -r .data.token <<<"$BOB")
BOB_ID=$(jq -r .data.userId <<<"$BOB")
BOB_SECRET=$(jq -r .data.secretKey <<<"$BOB")

# Accounts need an alias before they can create resources
curl -X POST $BASE/user/alias -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"alias":"bob"}'
curl $BASE/user/info -H "Authorization: Bearer $TOKEN"
curl $BASE/user/credits -H "Authorization: Bearer $TOKEN"

# More tokens: create (shown once), list, rename, regenerate, revoke
CI_TOKEN_ID=$(curl -X POST $BASE/user/token/create -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"name":"ci","expiresInDays":90}' | jq -r .data.tokenId)
curl "$BASE/user/token/list?includeRevoked=true" -H "Authorization: Bearer $TOKEN"
curl -X PUT $BASE/user/token/update -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"tokenId\":\"$CI_TOKEN_ID\",\"name\":\"deploy\"}"
curl -X POST $BASE/user/token/$CI_TOKEN_ID/regenerate -H "Authorization: Bearer $TOKEN"
curl -X POST $BASE/user/token/revoke -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"tokenId\":\"$CI_TOKEN_ID\"}"

# Legacy credentials work too (headers recommended over query parameters)
curl $BASE/user/info -H "X-Svc-UserId: $BOB_ID" -H "X-Svc-SecretKey: $BOB_SECRET"

# == agents
cat > echo.py <<'EOF'
class Echo:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": f"echo: {prompt} (history: {len(self.messages)} messages)"}


def create_agent():
    return Echo(), []
EOF
AGENT=$(curl -X POST $BASE/agent/create -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "$(jq -n --rawfile src echo.py '{agentName:"echo", description:"Echoes", sourceCode:$src}')" | jq -r .data.agentId)

# Buffered: {"success":true,"data":{"response","conversationId","agentId","metrics"}}
CONVERSATION=$(curl -X POST $BASE/agent/$AGENT/chat -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"prompt":"hello"}' | jq -r .data.conversationId)
curl -X POST $BASE/agent/$AGENT/chat -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"prompt\":\"again\",\"conversationId\":\"$CONVERSATION\"}"
# Streamed: __META__{conversationId,agentId}__, text as it comes, __TOOL__name__, __ERROR__{...}__, __METRICS__{...}
curl -N -X POST $BASE/stream/agent/$AGENT/chat -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"prompt":"hello"}'
# In a browser (GET, prompt in the query; sessionId continues a conversation)
curl -N "$BASE/stream/agent/$AGENT/chat?prompt=hello&sessionId=$CONVERSATION" -H "Authorization: Bearer $TOKEN"

curl $BASE/agent/$AGENT/conversations -H "Authorization: Bearer $TOKEN"
# By owner/slug: a private agent only for its owner, a public one for anyone
EXPECT=403 curl $BASE/agent/s/bob/echo
curl -X PUT $BASE/agent/update -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"agentId\":\"$AGENT\",\"visibility\":\"public\"}"
curl $BASE/agent/s/bob/echo

# == sse
curl -N -X POST $BASE/stream/agent/$AGENT/chat -H "Authorization: Bearer $TOKEN" \
  -H 'accept: text/event-stream' -H 'content-type: application/json' -d '{"prompt":"hello"}'
#   event: meta
#   data: {"conversationId":"...","agentId":"..."}
#
#   event: text
#   data: {"text":"echo: hello (history: 0 messages)"}
#
#   event: metrics
#   data: {"totalCycles":0,"totalTokens":0,"toolsUsed":[],"durationMs":15}

# == keys
curl -X POST $BASE/keys/store -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"serviceName":"openai","apiKey":"sk-walkthrough-0000"}'
curl $BASE/keys/list -H "Authorization: Bearer $TOKEN"            # names and hints, never values
curl $BASE/keys/check/openai -H "Authorization: Bearer $TOKEN"    # {"serviceName":"openai","exists":true}

# == role-tokens
ROLE=$(curl -X POST $BASE/role-token/create -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"name":"ci-bot","keys":["openai"],"expiresInDays":30}')
ROLE_TOKEN=$(jq -r .data.token <<<"$ROLE")
ROLE_TOKEN_ID=$(jq -r .data.tokenId <<<"$ROLE")
curl $BASE/role-token/list -H "Authorization: Bearer $TOKEN"
curl -X POST $BASE/role-token/validate -H 'content-type: application/json' -d "{\"token\":\"$ROLE_TOKEN\"}"
#   {"data":{"valid":true,"ownerAlias":"bob","name":"ci-bot","keys":["openai"],"expiresAt":...}}
curl $BASE/keys/check/openai -H "Authorization: Bearer $ROLE_TOKEN"   # may: ask about one key
EXPECT=403 curl $BASE/keys/list -H "Authorization: Bearer $ROLE_TOKEN" # may not: manage keys
curl -X POST $BASE/role-token/revoke -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"tokenId\":\"$ROLE_TOKEN_ID\"}"

# == oauth
AUTHORIZATION=$(EXPECT='200 400' curl $BASE/oauth/authorize/provider_a -H "Authorization: Bearer $TOKEN")
#   {"data":{"provider":"provider_a","authorizationUrl":"https://...&state=...&code_challenge=...",
#            "state":"...","expiresAt":...,"redirectUri":"http://127.0.0.1:8787/oauth/callback/provider_a"}}
AUTHORIZATION_URL=$(jq -r '.data.authorizationUrl // empty' <<<"$AUTHORIZATION")
if [ -z "$AUTHORIZATION_URL" ]; then
  # The one 400 expected here: the operator has not configured provider_a
  jq -e '.code == "OAUTH_PROVIDER_NOT_CONFIGURED"' <<<"$AUTHORIZATION" >/dev/null
  echo "provider_a is not configured on this platform: skipping the rest of OAuth"
elif [ "${OAUTH_AUTO_CONSENT:-}" = 1 ]; then
  # A provider that consents without asking (CI's test provider) lets curl play the browser
  curl -L "$AUTHORIZATION_URL"
  #   {"data":{"provider":"provider_a","stored":["provider_a","provider_a_refresh"],"expiresIn":3600,...}}
  curl $BASE/keys/check/provider_a -H "Authorization: Bearer $TOKEN"
else
  echo "Open $AUTHORIZATION_URL in a browser to link the account"
fi

# == actions
cat > weather.py <<'EOF'
def handler(event, context):
    city = event["city"]                      # parameters: query string (GET) or JSON body (POST)
    has_key = "openai" in event["keys"]       # the owner's keys named in keysNeeded
    return {"statusCode": 200, "body": {"city": city, "hasKey": has_key,
                                        "msLeft": context.get_remaining_time_in_millis()}}
EOF
ACTION=$(curl -X POST $BASE/action/create -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "$(jq -n --rawfile src weather.py '{actionName:"Weather", description:"Weather by city",
        runtime:"python3.12", category:"utilities", sourceCode:$src, status:"active",
        parameters:[{name:"city", type:"string", required:true}], keysNeeded:["openai"]}')" | jq -r .data.actionId)
#   {"success":true,"data":{"actionId":"act-...","message":"Action Weather created."}}

curl "$BASE/action/$ACTION?city=Paris" -H "Authorization: Bearer $TOKEN"             # GET: strings
REQUEST=$(curl -X POST $BASE/action/$ACTION -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"city":"Paris"}' | jq -r .meta.requestId)  # POST: JSON
#   {"success":true,"data":{"statusCode":200,"body":{"city":"Paris","hasKey":true,"msLeft":29987}},
#    "meta":{"requestId":"...","actionId":"act-...","executionTime":6.2,"memoryMb":128,"creditsUsed":1}}
curl -X POST $BASE/action/python-128mb/$ACTION -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"city":"Paris"}'                         # direct runtime call

# Run code once without creating an action (timeout in seconds, memory in MB)
curl -X POST $BASE/action/python-128mb/inline-code -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' \
  -d '{"code":"def handler(event, context):\n    return {\"statusCode\": 200, \"body\": event}\n","event":{"a":1},"timeout":10,"memory":128}'

curl $BASE/action/info/$ACTION -H "Authorization: Bearer $TOKEN"                # full record with sourceCode
curl -X PUT $BASE/action/update -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"actionId\":\"$ACTION\",\"visibility\":\"public\"}"
curl "$BASE/action/list?visibility=public&runtime=python&nameContains=weather" # also status, category, limit, cursor

# == mcp-create
cat > weather.js <<'EOF'
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool('forecast', { description: 'Forecast for a city', inputSchema: { city: z.string() } }, async ({ city }) => ({
    content: [{ type: 'text', text: `Sunny in ${city} (key set: ${Boolean(process.env.WEATHER_KEY)})` }],
  }));
  return server;
};
EOF
MCP=$(curl -X POST $BASE/mcp-admin/create -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "$(jq -n --rawfile src weather.js '{serverName:"weather", description:"Forecasts", sourceCode:$src}')" | jq -r .data.serverId)
#   {"data":{"serverId":"mcp-...","serverName":"weather","slug":"bob/weather","visibility":"private",
#    "sourceVisibility":"visible","latestVersion":1,"version":1,"tools":["forecast"],"authorPricing":null,
#    "endpointUrl":"http://127.0.0.1:8787/mcp/mcp-...","slugEndpointUrl":"http://127.0.0.1:8787/mcp/s/bob/weather",...},
#    "requestId":"..."}

# == mcp-call
curl -X POST $BASE/mcp/$MCP -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
curl -X POST $BASE/mcp/s/bob/weather -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Paris"}}}'
#   {"result":{"content":[{"type":"text","text":"Sunny in Paris (key set: false)"}]},"jsonrpc":"2.0","id":2}

# == mcp-versions
curl -X PUT $BASE/mcp-admin/update -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "$(jq -n --rawfile src weather.js --arg id $MCP '{serverId:$id, sourceCode:$src, changeNote:"Rain too"}')"
#   {"data":{..."latestVersion":2,"version":2}}
curl -X PUT $BASE/mcp-admin/update -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"serverId\":\"$MCP\",\"visibility\":\"public\",\"authorPricing\":{\"subscriptionPriceUsdMonthly\":4.99,\"freeTrialQuota\":100}}"
curl $BASE/mcp-admin/$MCP/versions                # {serverId, latestVersion, versions (newest first), count}
curl $BASE/mcp-admin/$MCP/versions/1              # one snapshot with its sourceCode (unless hidden)

# Pin: run a snapshot instead of the live version (404 if it does not exist)
curl -X POST "$BASE/mcp/$MCP?v=1" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
#   also ?version=1, and on /mcp/s/bob/weather; the answer's X-Mcp-Server-Version header names the version

# Roll back (owner only): version 3 is a copy of version 1, with rollbackOf 1, and goes live
curl -X POST $BASE/mcp-admin/$MCP/rollback -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"targetVersion":1}'
#   {"data":{"serverId":"mcp-...","rolledBackTo":1,"version":3,"latestVersion":3,"tools":["forecast"]}}

curl "$BASE/mcp-admin/list?visibility=public&limit=20"   # anonymous callers see public servers only
curl $BASE/mcp-admin/s/bob/weather                       # by owner/name

# == knowledge
# Upload a text file into a folder (text as is, or base64 with "isBase64":true; up to 5 MB):
# indexed, so searchable, when the call returns
curl -X POST $BASE/knowledge/upload -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"fileName":"forecast.md","folder":"notes/2026","content":"# Forecast\nRain on Tuesday, sun by the weekend."}'
#   {"data":{"key":"users/{userId}/notes/2026/forecast.md","fileName":"forecast.md","size":47,"contentType":"text/markdown",
#            "storageUsedMb":0.000045,"storageQuotaMb":100,"storageUsedBytes":47,"indexStatus":"indexed"}}

# Larger files (up to 50 MB): PUT them to a presigned URL; each is checked and indexed when it arrives
UPLOAD=$(curl -X POST $BASE/knowledge/upload-url -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"fileName":"report.txt","folder":"notes","contentType":"text/plain"}')
printf 'Quarterly report: the rain forecasting model improved.\n' > report.txt
curl -X PUT "$(jq -r .data.uploadUrl <<<"$UPLOAD")" -H 'content-type: text/plain' --data-binary @report.txt

curl "$BASE/knowledge/list?prefix=notes&limit=50" -H "Authorization: Bearer $TOKEN"
#   {"data":{"files":[{"key":...,"fileName":"report.txt","size":55,"contentType":"text/plain","lastModified":"2026-...Z",
#            "indexStatus":"indexed"}],"folders":[{"key":"users/{userId}/notes/2026/","fileName":"2026"}],"prefix":"notes/",
#            "nextCursor":null,...}}   (pass nextCursor back as cursor for the next page)
curl -X POST $BASE/knowledge/search -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"query":"rain forecast","folder":"notes","fileType":"md","limit":5}'
#   {"data":{"results":[{"fileName":"forecast.md","chunk":"# Forecast\nRain on Tuesday, ...","score":...,
#            "key":"users/{userId}/notes/2026/forecast.md"}],"query":"rain forecast","count":1,"mode":"lexical"}}
curl -X POST $BASE/knowledge/download-url -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"key":"notes/2026/forecast.md"}'    # {downloadUrl, key, expiresIn}
curl -X POST $BASE/knowledge/create-folder -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"folderName":"drafts","parentFolder":"notes"}'
curl -X DELETE $BASE/knowledge/delete -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"key":"notes/2026/forecast.md"}'    # out of search at once
curl -X POST $BASE/knowledge/delete-folder -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"key":"notes/"}'                    # everything inside; irreversible

# == websites
# 1. Upload a page (text, or base64 with "encoding":"base64"; up to 5 MB; contentType follows the extension)
curl -X POST $BASE/website/upload -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"fileName":"index.html","content":"<!doctype html><link rel=stylesheet href=style.css><h1>Hello from bob</h1>"}'
#   {"data":{"message":"File uploaded","key":"index.html","size":74,"contentType":"text/html; charset=utf-8",
#            "url":"http://bob.localhost:8788/index.html"},"requestId":...}
# 2. And its stylesheet
curl -X POST $BASE/website/upload -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"fileName":"style.css","content":"h1 { color: teal }"}'
# 3. Its address: open it in a browser (each site is an origin of its own, {alias}.localhost on its own port)
SITE=$(curl $BASE/website/info -H "Authorization: Bearer $TOKEN" | jq -r .data.siteUrl)
#   {"data":{"siteUrl":"http://bob.localhost:8788/","alias":"bob","hasIndexHtml":true,"fileCount":2,
#            "storageUsedMb":0.00009,"status":"published"},"requestId":...}
curl $SITE

# Larger files (up to 25 MB): a presigned PUT, as for knowledge (the URL signs the content type; ask
# with "method":"POST" for a form POST whose policy also caps the size); the file joins the site when
# it arrives
UPLOAD=$(curl -X POST $BASE/website/upload-url -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"fileName":"notes.txt","folder":"docs"}')
printf 'Site notes.\n' > notes.txt
curl -X PUT "$(jq -r .data.uploadUrl <<<"$UPLOAD")" -H "content-type: $(jq -r .data.contentType <<<"$UPLOAD")" --data-binary @notes.txt

curl "$BASE/website/list?prefix=&limit=50" -H "Authorization: Bearer $TOKEN"
#   {"data":{"files":[{"key":"index.html","fileName":"index.html","size":74,"contentType":"text/html; charset=utf-8",
#    "lastModified":"2026-...Z","type":"file"},...],"folders":[...],"prefix":"","nextCursor":null,
#    "storageUsedMb":...,"storageQuotaMb":50,"tier":"free"},"requestId":...}
curl $BASE/website/usage -H "Authorization: Bearer $TOKEN"   # data: {storageUsedMb, storageQuotaMb, percentUsed, tier}
curl -X POST $BASE/website/create-folder -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"folder":"drafts","parent":"docs"}'      # data: {"key":"docs/drafts/"}
curl -X POST $BASE/website/download-url -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"key":"style.css"}'                      # data: {downloadUrl, key, expiresIn}
# After changing files: clear the CDN's copies (default ["/*"]; paths are inside your site)
curl -X POST $BASE/website/invalidate -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"paths":["/*"]}'
#   {"data":{"invalidationId":"local-...","status":"Completed","paths":["/bob/*"],"creditsCharged":0},...}
curl -X POST $BASE/website/delete -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"key":"style.css"}'                      # data: {"key":"style.css","deleted":true}
curl -X POST $BASE/website/delete-folder -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"folder":"docs"}'                        # data: {"folder":"docs/","deletedCount":...}

# == search
# Public agents, MCP servers, their tools and skills, for anyone; stemmed: "forecasting" finds "forecast"
curl "$BASE/search?q=weather%20forecasting"
#   {"data":{"results":[{"resourceId":"mcp-...","resourceType":"mcp","name":"weather","description":"Forecasts",
#            "slug":"bob/weather","score":...,"owner":"bob","visibility":"public"},
#           {"resourceId":"mcp-...","resourceType":"mcp-tool","name":"forecast","slug":"bob/weather",...}],
#            "query":"weather forecasting","type":"all","count":2,"mode":"lexical"}}
curl "$BASE/search?q=forecast&type=mcp-tool&limit=5"   # type: all (default), agent, mcp, mcp-tool, skill

# == logs
curl "$BASE/logs?timeRange=24&status=success&resourceId=$ACTION&pageSize=50&page=0" -H "Authorization: Bearer $TOKEN"
curl $BASE/logs/$REQUEST -H "Authorization: Bearer $TOKEN"                  # full bodies
curl $BASE/logs/request/$REQUEST/trace -H "Authorization: Bearer $TOKEN"    # it and its descendants
curl $BASE/logs/trace/$REQUEST -H "Authorization: Bearer $TOKEN"            # the whole chain, from its root request

# == credits
curl $BASE/user/credits -H "Authorization: Bearer $TOKEN"      # balance, monthly grant, latest ledger entries
curl -X POST $BASE/admin/users/$BOB_ID/credits -H "Authorization: Bearer $ADMIN" \
  -H 'content-type: application/json' -d '{"amount":50,"reason":"Walkthrough top-up"}'

# == skills
# Publish a skill from a SKILL.md file: the YAML frontmatter names it (lowercase, digits, hyphens)
cat > SKILL.md <<'EOF'
---
name: release-notes
description: Writes release notes from a list of merged changes
---
# Release notes

1. Group the changes by area.
2. Lead with what users will notice.
EOF
SKILL=$(curl -X POST $BASE/skills/create -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "$(jq -n --rawfile md SKILL.md '{skillMd: $md, visibility: "public"}')" | jq -r .data.skill.skillId)
#   201 {"data":{"message":"Skill bob/release-notes created.","skill":{"skillId":"...","skillName":"release-notes",
#        "fullName":"bob/release-notes","slug":"bob/release-notes","rawUrl":"http://.../skills/s/bob/release-notes/SKILL.md",
#        "visibility":"public","status":"active",...}}}

# The raw text, exactly as published (public skills need no token), with an ETag and a 5-minute cache header
curl $BASE/skills/s/bob/release-notes/SKILL.md -D headers.txt
grep -iE '^(content-type|cache-control|etag):' headers.txt
ETAG=$(grep -i '^etag:' headers.txt | cut -d' ' -f2 | tr -d '\r')
EXPECT=304 curl $BASE/skills/s/bob/release-notes/SKILL.md -H "If-None-Match: $ETAG"   # unchanged: 304, no body

curl $BASE/skills/$SKILL                                  # with skillMd; also /skills/s/bob/release-notes
curl "$BASE/skills/list?visibility=public&owner=bob&limit=20"
curl -X PUT $BASE/skills/update -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"slug":"bob/release-notes","description":"Release notes, grouped by area"}'

# Public skills are in search from the request that published them (found here by its body's words)
curl "$BASE/search?q=grouped%20changes&type=skill"

# Star it (agents and MCP servers too): idempotent, and the count is public
curl -X POST $BASE/stars -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"resourceId\":\"$SKILL\",\"resourceType\":\"skill\"}"
curl "$BASE/stars/check?resourceId=$SKILL" -H "Authorization: Bearer $TOKEN"   # {"resourceId":"...","starred":true}
curl $BASE/stars/count/$SKILL                                                  # {"resourceId":"...","count":1}
curl $BASE/stars -H "Authorization: Bearer $TOKEN"                             # your stars, with names
curl -X DELETE $BASE/stars -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"resourceId\":\"$SKILL\",\"resourceType\":\"skill\"}"

# == cron
# Every morning at 8 in Paris (EventBridge Scheduler syntax: 6 fields, one of day-of-month and day-of-week "?")
CRON=$(curl -X POST $BASE/cron -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"name\":\"morning brief\",\"agentId\":\"$AGENT\",\"schedule\":\"cron(0 8 * * ? *)\",\"scheduleTimezone\":\"Europe/Paris\",\"inputMessage\":\"Summarise the news\"}" |
  jq -r .data.cronId)
curl -X POST $BASE/cron/$CRON/run -H "Authorization: Bearer $TOKEN"    # run now: {status, response, requestId}
curl -X PUT $BASE/cron/$CRON -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"status":"paused"}'
curl -X PUT $BASE/cron/$CRON -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"status":"active"}'
curl $BASE/cron -H "Authorization: Bearer $TOKEN"                       # {crons, count}, each with nextRunAt
curl -X DELETE $BASE/cron/$CRON -H "Authorization: Bearer $TOKEN"

# == cleanup
curl -X DELETE $BASE/agent/delete -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"agentId\":\"$AGENT\"}"                               # soft delete; update status "active" restores
EXPECT=410 curl -X POST $BASE/agent/$AGENT/chat -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{"prompt":"still there?"}'
curl -X DELETE $BASE/action/delete -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d "{\"actionId\":\"$ACTION\"}"
curl -X DELETE $BASE/mcp-admin/delete -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"serverId\":\"$MCP\"}"   # with its history; the name is free again
curl -X DELETE $BASE/keys/openai -H "Authorization: Bearer $TOKEN"
curl -X POST $BASE/skills/delete -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d "{\"skillId\":\"$SKILL\"}"   # the name is free again at once
