// The npm openai package (v4) against gguf serve, unchanged: a chat
// completion, a streamed one, a text completion and the model list.
// Usage: bench/serve-openai.sh, which starts the server and runs this
// file from a directory whose node_modules holds openai (an ES module
// resolves its imports from its own directory).
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY || "none" });
const fail = (what) => { console.error("FAIL " + what); process.exit(1); };

const models = await client.models.list();
if (!models.data.length || typeof models.data[0].id !== "string") fail("models.list");
const c = await client.chat.completions.create({ model: models.data[0].id, messages: [{ role: "user", content: "hi" }], max_tokens: 3, temperature: 0 });
if (typeof c.choices[0].message.content !== "string" || c.usage.completion_tokens !== 3) fail("chat " + JSON.stringify(c));
let text = "";
const s = await client.chat.completions.create({ model: models.data[0].id, messages: [{ role: "user", content: "hi" }], max_tokens: 3, temperature: 0, stream: true });
for await (const ch of s) text += ch.choices[0]?.delta?.content || "";
if (text !== c.choices[0].message.content) fail(`stream ${JSON.stringify(text)} != ${JSON.stringify(c.choices[0].message.content)}`);
const t = await client.completions.create({ model: models.data[0].id, prompt: "Once upon a time", max_tokens: 5, temperature: 0 });
console.log(`ok: models ${models.data[0].id}; chat ${JSON.stringify(c.choices[0].message.content)} (streamed the same); completion ${JSON.stringify(t.choices[0].text)}`);
