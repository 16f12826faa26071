# Generates families.jsonl (python3 gen.py, from this directory): a
# fourteenth corpus, written by h-secrets16 with its own seed, read with
# the sixth's (TestSweep6Offline, TestSweep6Run: every place, two-delta
# cuts, the partial-leak checker). Its families are the leaks h-secrets16
# fixed: (1) "<vendor>_KEY" of a vendor the key classifier did not know,
# with a plain hex value (hex reads as a hash, so the high-entropy
# fallback did not mask it either), as agents print it: env and .env
# dumps, docker inspect's Env, kubectl describe's Environment, YAML,
# JSON camelCase keys, a CLI's --<vendor>-key flag; a finding now; (2)
# "<word>_KEY" of a tool it does not know: masked, no finding ("accept");
# (3) the tokens of the tools agents call (Firecrawl, E2B, Buildkite,
# Tavily, Jina, NVIDIA, Cerebras, LlamaCloud, Fly.io, PostHog, RunPod,
# Together, Fireworks, Resend, Browserbase): vendor_token findings.
# Values carry the lines real tools print before them, so that the
# audit's split at half the value falls before the name of the secret.
# Near-misses ("near": true) must give no e2a.secret finding: a data
# structure's key (cache, idempotency, partition, routing, sort,
# primary, object), a public key, a key id, a commit or content hash,
# Stripe's publishable key, placeholders and variables, names that start
# like a token prefix. Random characters from a fixed seed.
import json, random, string
r = random.Random(20261216)
A = string.ascii_letters + string.digits
H = "0123456789abcdef"
LO = string.ascii_lowercase + string.digits
W = A + "-_"
def g(n, al=A):
    while True:
        s = "".join(r.choice(al) for _ in range(n))
        if al == H and any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s
        if al == LO and any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s
        if al in (A, W) and any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
            return s
        if al not in (H, LO, A, W) and any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s
LINES = ["$ uptime", " 11:02:03 up 3 days,  2:14,  1 user,  load average: 0.08, 0.12, 0.10", "$ df -h /srv",
         "Filesystem      Size  Used Avail Use% Mounted on", "/dev/nvme0n1p1   99G   41G   54G  44% /srv",
         "$ whoami", "agent", "$ pwd", "/workspace/app"]
def pre(v, sep="\n"):
    out = ""
    k = 0
    while len(out) <= len(v) + 8:
        out += LINES[k % len(LINES)] + sep
        k += 1
    return out + v
S = []
def add(name, value, *cores, accept=None, cut_accept=None, nocut=None):
    S.append({"name": name, "value": value, "cores": list(cores), "near": False, **({"accept": accept} if accept else {}),
              **({"cut_accept": cut_accept} if cut_accept else {}), **({"nocut": nocut} if nocut else {})})
def near(name, value, accept=None):
    S.append({"name": name, "value": value, "cores": [], "near": True, **({"accept": accept} if accept else {})})

# (1)
k = g(32, H); add("env_stripe_key_hex", pre("$ env | sort\nHOME=/home/agent\nSTRIPE_KEY=" + k + "\nTERM=xterm"), k)
k = g(32, H); add("dotenv_elevenlabs_key", pre("$ cat .env\nELEVENLABS_KEY=" + k + "\nVOICE_ID=21m00Tcm4TlvDq8ikWAM\n"), k)
k = g(40, H); add("export_deepgram_key", pre("export DEEPGRAM_KEY=" + k), k)
k = g(40, H); add("docker_inspect_wandb_key", pre('$ docker inspect trainer --format "{{json .Config.Env}}"\n["PATH=/usr/local/bin:/usr/bin","WANDB_KEY=' + k + '","WANDB_PROJECT=agents"]'), k)
k = g(64, H); add("kubectl_describe_serpapi_key", pre("$ kubectl describe pod search-7f9c\n    Environment:\n      SERPAPI_KEY:  " + k + "\n      LOG_LEVEL:    info"), k)
k = g(40, H); add("yaml_serper_key", pre("$ cat config.yaml\nsearch:\n  provider: serper\n  serper_key: " + k + "\n  gl: us"), k)
k = g(64, H); add("json_serpapi_camel", pre('$ cat tool.json\n{"engine": "google", "serpapiKey": "' + k + '", "num": 10}'), k)
k = g(32, H); add("cli_assemblyai_key_flag", pre("$ python transcribe.py --assemblyai-key " + k + " --file call.wav"), k)
k = g(32, H); add("env_azure_key", pre("$ printenv | grep AZURE\nAZURE_REGION=westeurope\nAZURE_KEY=" + k), k)
k = g(32); add("env_mistral_key_random", pre("$ cat .env.local\nMISTRAL_KEY=" + k + "\n"), k)
# (2)
k = g(40, H); add("env_unknown_tool_key_hex", pre("$ env | grep ZYTE\nZYTE_KEY=" + k), k,
                  accept="masked as high_entropy, no e2a.secret finding: the key of a tool the classifier does not know (KeyNamedKey)")
k = g(32); add("json_unknown_tool_key_random", pre('$ cat settings.json\n{"acmeKey": "' + k + '", "region": "eu"}'), k,
               accept="masked as high_entropy, no e2a.secret finding: the key of a tool the classifier does not know (KeyNamedKey)")
# (3)
for name, tok in [("firecrawl_fc", "fc-" + g(32, H)), ("e2b", "e2b_" + g(40, H)), ("buildkite_bkua", "bkua_" + g(40, H)),
                  ("tavily", "tvly-" + g(32)), ("tavily_dev", "tvly-dev-" + g(32)), ("jina", "jina_" + g(60)),
                  ("nvidia_nvapi", "nvapi-" + g(64, W)), ("cerebras_csk", "csk-" + g(48, LO)), ("llamacloud_llx", "llx-" + g(48)),
                  ("flyio_fo1", "fo1_" + g(43, W)), ("posthog_phx", "phx_" + g(47)), ("runpod_rpa", "rpa_" + g(44, string.ascii_uppercase + string.digits)),
                  ("together_tgp", "tgp_v1_" + g(43, W)), ("fireworks_fw", "fw_" + g(24)), ("resend_re", "re_" + g(8) + "_" + g(24)),
                  ("browserbase_bb", "bb_live_" + g(27, W))]:
    add("agent_tool_" + name, pre("$ cat ~/.config/agent/tools.env\nTOOL_TOKEN=" + tok + "\n"), tok)

near("near_cache_key_sha256", "CACHE_KEY=" + g(64, H))
near("near_idempotency_key", "POST /v1/charges\nIdempotency-Key: " + g(32) + "\nIDEMPOTENCY_KEY=8e03978e-40d5-43e8-bc93-6894a57f9324")
near("near_partition_routing_sort", "PARTITION_KEY=user_id\nROUTING_KEY=orders.created\nSORT_KEY=created_at\nPRIMARY_KEY=id")
near("near_object_s3_key", "OBJECT_KEY=uploads/2026/12/a.png\nS3_KEY=backups/db-" + g(40, H) + ".sql.gz")
near("near_public_key_and_id", "PUBLIC_KEY=" + g(44) + "\nKEY_ID=" + g(32, H))
near("near_commit_hashes", "GIT_COMMIT_SHA=" + g(40, H) + "\nCONTENT_HASH=" + g(64, H) + "\nIMAGE_DIGEST=sha256:" + g(64, H))
near("near_json_cache_key", '{"cacheKey": "' + g(64, H) + '", "rowKey": "' + g(32, H) + '", "dedupKey": "' + g(32) + '"}')
near("near_stripe_publishable", "STRIPE_KEY=pk_live_" + g(24) + "\nSTRIPE_PUBLIC_KEY=pk_live_" + g(24),
     accept="pk_live_ is Stripe's publishable key: masked as high_entropy, no finding")
near("near_vendor_key_placeholder", "STRIPE_KEY=your-stripe-key\nDEEPGRAM_KEY=${DEEPGRAM_KEY}\nWANDB_KEY=<your-wandb-key>")
near("near_vendor_key_environ", 'key = os.environ["DEEPGRAM_KEY"]\nserper_key: !env SERPER_KEY')
near("near_gpg_ssh_key", "GPG_KEY=" + g(40, H) + "\nSSH_KEY=~/.ssh/id_ed25519")
near("near_token_prefix_names", "fc-layer-1 fc-layer-2\nfw_update --force && fw_printenv\np = re.compile(r'x'); re_match_all_the_names()\nfrom jina_embeddings_v3 import x\nphx_click phx-click")
near("near_short_prefixed", "fc-" + g(20, H) + " e2b_sandbox_id bkua_" + g(16, H) + " tvly-client")

with open("families.jsonl", "w") as f:
    for o in S:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
