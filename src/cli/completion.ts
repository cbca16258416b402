/**
 * `agent-wallet completion bash|zsh|fish`: completion scripts generated from the command tree,
 * so they always offer the commands and flags this binary has. Each script walks the words typed
 * so far to the deepest known command and offers its subcommands and long flags.
 */
import type { CommandUnknownOpts } from '@commander-js/extra-typings';

interface Node {
  /** The command path after `agent-wallet`, words separated by spaces ("" for the root). */
  path: string;
  summary: string;
  subcommands: string[];
  flags: { name: string; summary: string }[];
}

function walk(cmd: CommandUnknownOpts, path: string, out: Node[]): Node[] {
  const visible = cmd.commands.filter((c) => c.name() !== 'help');
  out.push({
    path,
    summary: cmd.description().split('\n')[0]!,
    subcommands: [...visible.map((c) => c.name()), ...(visible.length ? ['help'] : [])],
    flags: [...cmd.options.filter((o) => o.long).map((o) => ({ name: o.long!, summary: o.description })), { name: '--help', summary: 'show help' }],
  });
  for (const c of visible) walk(c as CommandUnknownOpts, path ? `${path} ${c.name()}` : c.name(), out);
  return out;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

function bash(nodes: Node[]): string {
  const cases = nodes.map((n) => `    ${quote(n.path)}) echo ${quote([...n.subcommands, ...n.flags.map((f) => f.name)].join(' '))} ;;`).join('\n');
  return `# agent-wallet completion for bash: source <(agent-wallet completion bash)
_agent_wallet_words() {
  case "$1" in
${cases}
    *) return 1 ;;
  esac
}
_agent_wallet() {
  local path="" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    _agent_wallet_words "\${path:+$path }$word" >/dev/null && path="\${path:+$path }$word"
  done
  COMPREPLY=($(compgen -W "$(_agent_wallet_words "$path")" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _agent_wallet agent-wallet
`;
}

/** Fish: the condition in double quotes (paths hold no `$` or `"`), words and descriptions in single quotes. */
function fish(nodes: Node[]): string {
  const paths = nodes.map((n) => quote(n.path)).join(' ');
  const lines = nodes.flatMap((n) => [
    ...n.subcommands.map((s) => {
      const child = nodes.find((c) => c.path === (n.path ? `${n.path} ${s}` : s));
      return `complete -c agent-wallet -f -n "__agent_wallet_at ${quote(n.path)}" -a ${quote(s)} -d ${quote(child?.summary ?? 'help for a command')}`;
    }),
    ...n.flags.map((f) => `complete -c agent-wallet -n "__agent_wallet_at ${quote(n.path)}" -l ${quote(f.name.slice(2))} -d ${quote(f.summary)}`),
  ]);
  return `# agent-wallet completion for fish: agent-wallet completion fish > ~/.config/fish/completions/agent-wallet.fish
set -g __agent_wallet_paths ${paths}
function __agent_wallet_at
  set -l path ''
  for word in (commandline -opc)[2..-1]
    string match -q -- '-*' $word; and continue
    set -l next (string trim -- "$path $word")
    contains -- $next $__agent_wallet_paths; and set path $next
  end
  test "$path" = "$argv[1]"
end
${lines.join('\n')}
`;
}

/** The completion script for `shell`. */
export function completionScript(program: CommandUnknownOpts, shell: 'bash' | 'zsh' | 'fish'): string {
  const nodes = walk(program, '', []);
  if (shell === 'fish') return fish(nodes);
  // zsh runs the bash function through its bashcompinit layer.
  if (shell === 'zsh') return `# agent-wallet completion for zsh: source <(agent-wallet completion zsh)\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n${bash(nodes).split('\n').slice(1).join('\n')}`;
  return bash(nodes);
}
