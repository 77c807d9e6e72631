//! Shell command lines as an agent runs them: a small lexer that splits a command line
//! into simple commands the way a POSIX shell would (quotes, escapes, heredocs,
//! comments, substitutions, `sh -c` scripts), and the rule built on it, whether a command
//! queries git history ([`is_git_history_command`], SPEC §3.4 "history queries").
//!
//! Pure string functions with no knowledge of trajectories or the database: the SFT
//! readers ([`crate::sft`]) and the DuckDB adapters ([`crate::rules::udf`]) both call in
//! here, so neither depends on the other.

/// git subcommands that query history (SPEC §3.4 "history queries").
pub const GIT_HISTORY_SUBCOMMANDS: &[&str] = &["log", "show", "blame", "rev-list", "reflog"];

/// Whether a shell command line runs `git log`, `git show`, `git blame`, `git rev-list`
/// or `git reflog` (SPEC §3.4) anywhere.
///
/// The line is split like a shell would into simple commands: at `;`, `&&`, `||`, `|`,
/// `&`, newlines and parentheses; quotes and backslashes are honoured; heredoc bodies
/// and `#` comments are skipped; command substitutions `$(…)` and `` `…` `` (also inside
/// double quotes), process substitutions `<(…)`, and the script of `bash|sh|zsh|dash -c
/// '…'` are split recursively (they do run). In each simple command, leading `VAR=x`
/// assignments, the keywords `if then else elif do while until ! {`, and wrappers
/// `sudo env time command exec nohup nice timeout stdbuf xargs` (with their options) are
/// skipped; the command must then be `git` (any path ending in `/git`) and, after
/// git's global options (`-C dir`, `-c k=v`, `--git-dir x`, `--work-tree x`,
/// `--namespace x`, `--no-pager`, `-P`, ...), the subcommand one of
/// [`GIT_HISTORY_SUBCOMMANDS`].
///
/// Decisions: a `git log` that is only mentioned — inside a quoted argument (`echo "git
/// log"`, `grep "git show"`), in a heredoc body, in a comment, or in a Python string —
/// is **not** a run and gives `false`; `echo "$(git log -1)"` runs it and gives `true`.
/// `git stash show`, `git diff`, `git status`, `git shortlog`, aliases and `git help
/// log` give `false`.
pub fn is_git_history_command(command: &str) -> bool {
    git_history_at_depth(command, 0)
}

const MAX_SHELL_DEPTH: usize = 8;

fn git_history_at_depth(command: &str, depth: usize) -> bool {
    if depth > MAX_SHELL_DEPTH {
        return false;
    }
    shell_simple_commands(command, depth).iter().any(|words| runs_git_history(words, depth))
}

/// Words that may precede the command of a simple command.
const SHELL_KEYWORDS: &[&str] = &["!", "{", "if", "then", "else", "elif", "do", "while", "until"];

/// Command wrappers: (name, options that take a separate value, positional arguments
/// before the wrapped command).
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    ("sudo", &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-T"], 0),
    ("env", &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"], 0),
    ("time", &["-f", "-o", "--format", "--output"], 0),
    ("command", &[], 0),
    ("exec", &["-a"], 0),
    ("nohup", &[], 0),
    ("nice", &["-n", "--adjustment"], 0),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"], 1),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    (
        "xargs",
        &["-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "--delimiter", "--max-args", "--max-procs", "--arg-file"],
        0,
    ),
];

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash"];

/// git global options that take the next word as their value.
const GIT_VALUE_OPTIONS: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds"];

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else { return false };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn runs_git_history(words: &[String], depth: usize) -> bool {
    let mut i = 0;
    loop {
        let Some(w) = words.get(i) else { return false };
        if is_assignment(w) || SHELL_KEYWORDS.contains(&w.as_str()) {
            i += 1;
            continue;
        }
        if let Some((name, value_opts, positional)) = WRAPPERS.iter().find(|(n, ..)| *n == basename(w)) {
            i += 1;
            while let Some(o) = words.get(i) {
                if o == "--" {
                    i += 1;
                    break;
                }
                if o.starts_with('-') && o.len() > 1 {
                    i += if value_opts.contains(&o.as_str()) { 2 } else { 1 };
                } else if *name == "env" && is_assignment(o) {
                    i += 1;
                } else {
                    break;
                }
            }
            i += positional;
            continue;
        }
        break;
    }
    let cmd = basename(&words[i]);
    if SHELLS.contains(&cmd) {
        let mut j = i + 1;
        while let Some(o) = words.get(j) {
            if o.starts_with('-') && !o.starts_with("--") && o[1..].contains('c') {
                return words.get(j + 1).is_some_and(|script| git_history_at_depth(script, depth + 1));
            }
            if o == "-o" || o == "+o" || o == "-O" || o == "+O" {
                j += 2;
            } else if o.starts_with('-') || o.starts_with('+') {
                j += 1;
            } else {
                return false;
            }
        }
        return false;
    }
    if cmd != "git" {
        return false;
    }
    let mut j = i + 1;
    while let Some(o) = words.get(j) {
        if GIT_VALUE_OPTIONS.contains(&o.as_str()) {
            j += 2;
        } else if o.starts_with('-') {
            j += 1;
        } else {
            return GIT_HISTORY_SUBCOMMANDS.contains(&o.as_str());
        }
    }
    false
}

/// Split a shell command line into simple commands (lists of words, quotes removed).
/// Commands inside substitutions come out as commands of their own (order is not
/// meaningful).
fn shell_simple_commands(src: &str, depth: usize) -> Vec<Vec<String>> {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = ShellLexer { depth, ..ShellLexer::default() };
    lx.run(&chars);
    lx.out
}

#[derive(Default)]
struct ShellLexer {
    depth: usize,
    out: Vec<Vec<String>>,
    words: Vec<String>,
    word: Option<String>,
    /// The next word is a redirection target (dropped).
    skip_target: bool,
    /// The next word is a heredoc delimiter; `Some(strip_tabs)` for `<<` / `<<-`.
    heredoc_next: Option<bool>,
    /// Heredocs whose bodies start after the current line: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
}

impl ShellLexer {
    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }
    fn push_str(&mut self, s: &[char]) {
        self.word.get_or_insert_with(String::new).extend(s.iter());
    }
    fn end_word(&mut self) {
        if let Some(w) = self.word.take() {
            if let Some(strip) = self.heredoc_next.take() {
                self.heredocs.push((w, strip));
            } else if self.skip_target {
                self.skip_target = false;
            } else {
                self.words.push(w);
            }
        }
    }
    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.out.push(std::mem::take(&mut self.words));
        }
        self.skip_target = false;
        self.heredoc_next = None;
    }
    /// Split `inner` recursively and add its commands.
    fn nested(&mut self, inner: &[char]) {
        if self.depth < MAX_SHELL_DEPTH {
            let mut lx = ShellLexer { depth: self.depth + 1, ..ShellLexer::default() };
            lx.run(inner);
            self.out.append(&mut lx.out);
        }
    }
    /// `c[open] == '('`: a command/process substitution body up to the matching `)`.
    /// Returns the index after it.
    fn substitution(&mut self, c: &[char], start: usize, open: usize) -> usize {
        let close = matching_paren(c, open);
        self.nested(&c[open + 1..close.min(c.len())]);
        self.push_str(&c[start..(close + 1).min(c.len())]);
        close + 1
    }
    fn backtick(&mut self, c: &[char], open: usize) -> usize {
        let mut j = open + 1;
        while j < c.len() && c[j] != '`' {
            j += if c[j] == '\\' { 2 } else { 1 };
        }
        let close = j.min(c.len());
        self.nested(&c[open + 1..close]);
        self.push_str(&c[open..(close + 1).min(c.len())]);
        close + 1
    }
    fn skip_heredoc_bodies(&mut self, c: &[char], mut i: usize) -> usize {
        for (delim, strip) in std::mem::take(&mut self.heredocs) {
            while i < c.len() {
                let end = c[i..].iter().position(|&ch| ch == '\n').map_or(c.len(), |p| i + p);
                let mut line: String = c[i..end].iter().collect();
                if line.ends_with('\r') {
                    line.pop();
                }
                let line = if strip { line.trim_start_matches('\t') } else { line.as_str() };
                let done = line == delim;
                i = end + 1;
                if done {
                    break;
                }
            }
        }
        i.min(c.len())
    }
    fn run(&mut self, c: &[char]) {
        let n = c.len();
        let mut i = 0;
        while i < n {
            let ch = c[i];
            let next = c.get(i + 1).copied();
            match ch {
                '\\' => {
                    match next {
                        Some('\n') => {}
                        Some(x) => self.push(x),
                        None => self.push('\\'),
                    }
                    i += 2;
                }
                '\'' => {
                    let end = c[i + 1..].iter().position(|&x| x == '\'').map_or(n, |p| i + 1 + p);
                    self.push_str(&c[i + 1..end]);
                    i = end + 1;
                }
                '"' => {
                    self.word.get_or_insert_with(String::new);
                    i += 1;
                    while i < n && c[i] != '"' {
                        if c[i] == '\\' && i + 1 < n {
                            match c[i + 1] {
                                '$' | '`' | '"' | '\\' => self.push(c[i + 1]),
                                '\n' => {}
                                x => {
                                    self.push('\\');
                                    self.push(x);
                                }
                            }
                            i += 2;
                        } else if c[i] == '$' && c.get(i + 1) == Some(&'(') {
                            i = self.substitution(c, i, i + 1);
                        } else if c[i] == '`' {
                            i = self.backtick(c, i);
                        } else {
                            self.push(c[i]);
                            i += 1;
                        }
                    }
                    i += 1;
                }
                '$' if next == Some('(') => i = self.substitution(c, i, i + 1),
                '`' => i = self.backtick(c, i),
                '#' if self.word.is_none() => {
                    while i < n && c[i] != '\n' {
                        i += 1;
                    }
                }
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    i += 1;
                }
                '\n' => {
                    self.end_command();
                    i = self.skip_heredoc_bodies(c, i + 1);
                }
                ';' | '(' | ')' => {
                    self.end_command();
                    i += 1;
                }
                '&' if next == Some('>') => {
                    self.end_word();
                    i += 2;
                    if c.get(i) == Some(&'>') {
                        i += 1;
                    }
                    self.skip_target = true;
                }
                '&' | '|' => {
                    self.end_command();
                    i += if next == Some(ch) || (ch == '|' && next == Some('&')) { 2 } else { 1 };
                }
                '<' | '>' => {
                    // A word of digits right before is a file descriptor, not an argument.
                    if self.word.as_deref().is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())) {
                        self.word = None;
                    } else {
                        self.end_word();
                    }
                    if next == Some('(') {
                        i = self.substitution(c, i, i + 1);
                        self.end_word();
                    } else if ch == '<' && next == Some('<') {
                        if c.get(i + 2) == Some(&'<') {
                            i += 3;
                            self.skip_target = true;
                        } else {
                            let strip = c.get(i + 2) == Some(&'-');
                            i += if strip { 3 } else { 2 };
                            self.heredoc_next = Some(strip);
                        }
                    } else {
                        i += 1;
                        if matches!(c.get(i), Some('>' | '&' | '|')) {
                            i += 1;
                        }
                        self.skip_target = true;
                    }
                }
                _ => {
                    self.push(ch);
                    i += 1;
                }
            }
        }
        self.end_command();
    }
}

/// Index of the `)` matching `c[open] == '('`, honouring quotes, backslashes, backticks
/// and nesting; `c.len()` when unclosed.
fn matching_paren(c: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < c.len() {
        match c[i] {
            '\\' => i += 1,
            '\'' => {
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '`' => {
                i += 1;
                while i < c.len() && c[i] != '`' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    c.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_history_true() {
        for c in [
            "git log",
            "git log -n 1 django/views/debug.py",
            "git show 0ddb4ebf",
            "git blame -L 10,20 a.py",
            "git rev-list --count HEAD",
            "git reflog",
            "cd /testbed && git log --oneline | head -5",
            "cd x; git show HEAD:a.py > /tmp/a.py",
            "git -C /testbed log -1",
            "git --no-pager show HEAD",
            "git -c core.pager=cat log -3",
            "git --git-dir=/r/.git --work-tree /r blame f",
            "GIT_PAGER=cat git log",
            "/usr/bin/git log",
            "sudo -u me git log",
            "timeout 10 git log",
            "ls || git log",
            "git status && git log -p -1 -- a.py",
            "echo \"$(git log -1 --format=%H)\"",
            "x=`git rev-list HEAD | wc -l`",
            "diff <(git show HEAD:a) a",
            "bash -c 'cd r && git log'",
            "for c in a b; do git show $c; done",
            "if git log -1; then echo y; fi",
            "cat <<'EOF' > f.txt\ngit log\nEOF\ngit log -1",
            "git log>out.txt",
            "git log 2>&1 | head",
            "(cd r && git blame x)",
            "cd r\r\ngit log -1\r\n",
        ] {
            assert!(is_git_history_command(c), "expected true: {c:?}");
        }
    }

    #[test]
    fn git_history_false() {
        for c in [
            "git diff",
            "git status",
            "git diff django/views/debug.py",
            "git checkout a.py",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            "echo 'git log'",
            "echo \"run git log to see\"",
            "grep -rn \"git show\" docs/",
            "git stash show",
            "git shortlog -s",
            "git help log",
            "# git log\nls",
            "cat <<'EOF' > script.sh\ngit log -1\nEOF",
            "cat <<-EOF > s.sh\n\tgit blame x\n\tEOF\necho done",
            "python -c \"import subprocess; subprocess.run(['git', 'log'])\"",
            "legit log",
            "git-log",
            "git",
            "",
            "ls -la # then git show",
            "git commit -m 'git log'",
            "git -C log status",
        ] {
            assert!(!is_git_history_command(c), "expected false: {c:?}");
        }
    }
}
