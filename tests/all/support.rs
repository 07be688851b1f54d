//! Running the `dedupsim` binary from tests: a small stand-in for the
//! `assert_cmd` and `predicates` crates (the subset these tests use), built
//! on `std::process` so the test build needs no extra dependency tree.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The path of a binary of this package built for the tests.
pub fn cargo_bin(name: &str) -> PathBuf {
    assert_eq!(name, "dedupsim", "only the dedupsim binary is built for the tests");
    PathBuf::from(env!("CARGO_BIN_EXE_dedupsim"))
}

/// A command to run and check (`Command::cargo_bin(..).args(..).assert()`).
pub struct Command {
    cmd: std::process::Command,
    timeout: Option<Duration>,
}

impl Command {
    /// The package's binary `name`.
    pub fn cargo_bin(name: &str) -> Result<Command, std::convert::Infallible> {
        Ok(Command { cmd: std::process::Command::new(cargo_bin(name)), timeout: None })
    }

    /// The package's binary run by `sh` after the shell commands `limits`
    /// (e.g. `ulimit -v 2097152`, or `trap '' XFSZ; ulimit -f 8`): for
    /// what a resource limit makes fail. Arguments follow as usual.
    pub fn under_limits(limits: &str) -> Command {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c").arg(format!("{limits}; exec \"$0\" \"$@\"")).arg(cargo_bin("dedupsim"));
        Command { cmd, timeout: None }
    }

    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(a);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        self.cmd.args(args);
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Kill the process (and fail) if it runs longer than `t`.
    pub fn timeout(&mut self, t: Duration) -> &mut Self {
        self.timeout = Some(t);
        self
    }

    /// Runs the command to completion (stdin closed, output captured).
    pub fn assert(&mut self) -> Assert {
        let what = format!("{:?}", self.cmd);
        let child = self
            .cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        let output = match self.timeout {
            None => child.wait_with_output().unwrap_or_else(|e| panic!("{what}: {e}")),
            Some(t) => wait_with_timeout(child, t, &what),
        };
        Assert { output, what }
    }
}

fn wait_with_timeout(mut child: Child, t: Duration, what: &str) -> Output {
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).map(|_| v)
        })
    };
    let out = pipe(Box::new(child.stdout.take().unwrap()));
    let err = pipe(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > t {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still running after {t:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap().unwrap(), stderr: err.join().unwrap().unwrap() }
}

/// A finished command, checked by chained assertions that panic with the
/// command, its exit status and its output.
pub struct Assert {
    output: Output,
    what: String,
}

impl Assert {
    fn fail(&self, msg: &str) -> ! {
        panic!(
            "{msg}\ncommand: {}\nstatus: {}\n--- stdout\n{}\n--- stderr\n{}",
            self.what,
            self.output.status,
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }

    pub fn get_output(&self) -> &Output {
        &self.output
    }

    pub fn success(self) -> Self {
        if !self.output.status.success() {
            self.fail("expected success");
        }
        self
    }

    pub fn failure(self) -> Self {
        if self.output.status.success() {
            self.fail("expected failure");
        }
        self
    }

    pub fn code(self, code: i32) -> Self {
        if self.output.status.code() != Some(code) {
            self.fail(&format!("expected exit code {code}"));
        }
        self
    }

    /// Exit code `code`, each of `needles` on stderr, and no panic.
    pub fn fails_with(self, code: i32, needles: &[&str]) -> Self {
        let mut a = self.code(code).stderr(predicate::str::contains("panicked").not());
        for n in needles {
            a = a.stderr(predicate::str::contains(*n));
        }
        a
    }

    pub fn stdout(self, p: predicate::Predicate) -> Self {
        if !p.eval(&String::from_utf8_lossy(&self.output.stdout)) {
            self.fail(&format!("stdout: expected {}", p.describe()));
        }
        self
    }

    pub fn stderr(self, p: predicate::Predicate) -> Self {
        if !p.eval(&String::from_utf8_lossy(&self.output.stderr)) {
            self.fail(&format!("stderr: expected {}", p.describe()));
        }
        self
    }
}

/// Predicates on a command's output (`predicate::str::contains(..).not()`).
pub mod predicate {
    type Test = Box<dyn Fn(&str) -> bool>;

    /// A test on text with a description for failure messages.
    pub struct Predicate {
        test: Test,
        describe: String,
    }

    impl Predicate {
        pub fn eval(&self, s: &str) -> bool {
            (self.test)(s)
        }

        pub fn describe(&self) -> &str {
            &self.describe
        }

        pub fn not(self) -> Predicate {
            let Predicate { test, describe } = self;
            Predicate { test: Box::new(move |s| !test(s)), describe: format!("not ({describe})") }
        }

        pub fn and(self, other: Predicate) -> Predicate {
            let (a, b) = (self.test, other.test);
            Predicate {
                test: Box::new(move |s| a(s) && b(s)),
                describe: format!("({}) and ({})", self.describe, other.describe),
            }
        }

        pub fn or(self, other: Predicate) -> Predicate {
            let (a, b) = (self.test, other.test);
            Predicate {
                test: Box::new(move |s| a(s) || b(s)),
                describe: format!("({}) or ({})", self.describe, other.describe),
            }
        }
    }

    /// Any test, described by `describe`.
    pub fn function(describe: &str, f: impl Fn(&str) -> bool + 'static) -> Predicate {
        Predicate { test: Box::new(f), describe: describe.to_string() }
    }

    pub mod str {
        use super::{function, Predicate};

        pub fn contains(needle: impl Into<String>) -> Predicate {
            let needle = needle.into();
            function(&format!("to contain {needle:?}"), move |s| s.contains(needle.as_str()))
        }

        pub fn starts_with(prefix: impl Into<String>) -> Predicate {
            let prefix = prefix.into();
            function(&format!("to start with {prefix:?}"), move |s| s.starts_with(prefix.as_str()))
        }
    }
}
