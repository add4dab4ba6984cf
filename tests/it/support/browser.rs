//! A real browser for the web inbox's tests (UI-10): Debian's `chromium`,
//! headless, driven by `chromedriver` over WebDriver (the `fantoccini`
//! client). Each [`Browser`] has its own chromedriver process and its own
//! empty profile, so tests run in parallel; at most two at once, so two
//! cores are not swamped. Under `CI=true` a missing browser is a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use super::{kill_after, under_ci};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long a wait for the page may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(15);

/// WebDriver's codes for the keys the inbox reacts to.
pub mod keys {
    pub const TAB: char = '\u{E004}';
    pub const ENTER: char = '\u{E007}';
    pub const ESCAPE: char = '\u{E00C}';
    pub const CONTROL: char = '\u{E009}';
    pub const ARROW_UP: char = '\u{E013}';
    pub const ARROW_DOWN: char = '\u{E015}';
}

/// At most this many browsers at once in the test binary.
const AT_ONCE: usize = 2;
static SLOTS: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut taken = SLOTS.lock().unwrap_or_else(|poison| poison.into_inner());
        while *taken >= AT_ONCE {
            taken = FREED
                .wait(taken)
                .unwrap_or_else(|poison| poison.into_inner());
        }
        *taken += 1;
        Slot
    }

    /// Two slots taken together (QUO-8: two people side by side), so two
    /// such tests never hold one each while waiting for the other.
    fn take_two() -> (Slot, Slot) {
        let mut taken = SLOTS.lock().unwrap_or_else(|poison| poison.into_inner());
        while *taken + 2 > AT_ONCE {
            taken = FREED
                .wait(taken)
                .unwrap_or_else(|poison| poison.into_inner());
        }
        *taken += 2;
        (Slot, Slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.lock().unwrap_or_else(|poison| poison.into_inner()) -= 1;
        // A waiter for two slots may be behind a waiter for one.
        FREED.notify_all();
    }
}

/// A headless Chromium session; dropping it ends the session and the
/// driver.
pub struct Browser {
    runtime: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    _profile: tempfile::TempDir,
    _slot: Slot,
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(PATIENCE, client.close()).await });
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A browser, or `None` (skip) when Chromium is not installed outside CI.
pub fn browser() -> Option<Browser> {
    browser_with(&[])
}

/// A browser started with `extra` command-line switches besides the usual
/// (e.g. `--force-dark-mode`).
pub fn browser_with(extra: &[&str]) -> Option<Browser> {
    browser_with_options(extra, json!({}))
}

/// A browser with `extra` switches and further `goog:chromeOptions`
/// (`mobileEmulation` for a phone with touch, `prefs` for permissions).
pub fn browser_with_options(extra: &[&str], options: Value) -> Option<Browser> {
    installed().then(|| Browser::start(extra, options, Slot::take()))
}

/// Two browsers at once, each with its own profile (two people in two
/// browsers, QUO-8), or `None` (skip) as [`browser`].
pub fn two_browsers() -> Option<(Browser, Browser)> {
    if !installed() {
        return None;
    }
    let (first, second) = Slot::take_two();
    Some((
        Browser::start(&[], json!({}), first),
        Browser::start(&[], json!({}), second),
    ))
}

/// Whether Chromium and its driver are installed; under `CI=true` they
/// must be.
fn installed() -> bool {
    let installed = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !installed {
        assert!(
            !under_ci(),
            "UI-10: {CHROMIUM} and {CHROMEDRIVER} are missing under CI=true (.ci/run installs them)"
        );
        eprintln!(
            "skipped: install Debian's chromium and chromium-driver to run the browser tests"
        );
    }
    installed
}

/// The port chromedriver printed (`--port=0` picks a free one), or `None`
/// if it exited first.
fn driver_port(driver: &mut Child) -> Option<u16> {
    let mut out = BufReader::new(driver.stdout.take().expect("chromedriver's stdout"));
    let mut line = String::new();
    loop {
        line.clear();
        let read = out
            .read_line(&mut line)
            .expect("read chromedriver's output");
        if read == 0 {
            return None;
        }
        if let Some(rest) = line.split("started successfully on port ").nth(1) {
            let port = rest.trim().trim_end_matches('.').parse().expect("a port");
            // Keep draining its output so it never blocks on a full pipe.
            std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
            return Some(port);
        }
    }
}

/// A chromedriver listening on loopback, and its port. On a loaded
/// machine one has been seen to exit before it listened; another is
/// started then (three tries, its exit status said on the last).
fn start_driver() -> (Child, u16) {
    let mut attempt = 1;
    loop {
        let mut driver = Command::new(CHROMEDRIVER)
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        kill_after(driver.id(), Duration::from_secs(300));
        if let Some(port) = driver_port(&mut driver) {
            return (driver, port);
        }
        let status = driver.wait().expect("chromedriver's exit status");
        assert!(
            attempt < 3,
            "chromedriver exited before it listened, three times: {status}"
        );
        eprintln!("chromedriver exited before it listened ({status}); starting another");
        attempt += 1;
    }
}

impl Browser {
    fn start(extra: &[&str], options: Value, slot: Slot) -> Browser {
        let profile = tempfile::tempdir().expect("a browser profile");
        let (driver, port) = start_driver();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the WebDriver client");
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--window-size=1280,900",
            "--force-device-scale-factor=1",
        ]
        .iter()
        .chain(extra)
        .map(|arg| arg.to_string())
        .collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let mut chrome = json!({"binary": CHROMIUM, "args": args});
        if let (Some(chrome), Some(options)) = (chrome.as_object_mut(), options.as_object()) {
            chrome.extend(options.clone());
        }
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("goog:chromeOptions".into(), chrome);
        let client = runtime.block_on(async {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            let started = Instant::now();
            loop {
                match ClientBuilder::new(connector.clone())
                    .capabilities(capabilities.clone())
                    .connect(&format!("http://127.0.0.1:{port}"))
                    .await
                {
                    Ok(client) => break client,
                    Err(error) if started.elapsed() < PATIENCE => {
                        eprintln!("chromedriver not ready yet: {error}");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    Err(error) => panic!("could not start a Chromium session: {error}"),
                }
            }
        });
        Browser {
            runtime,
            client: Some(client),
            driver,
            _profile: profile,
            _slot: slot,
        }
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("a live session")
    }

    fn run<T>(&self, future: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(future)
    }

    /// The value of the page's cookie `name`.
    pub fn cookie(&self, name: &str) -> String {
        self.run(self.client().get_named_cookie(name))
            .unwrap_or_else(|error| panic!("cookie {name}: {error}"))
            .value()
            .to_owned()
    }

    pub fn goto(&self, url: &str) {
        self.run(self.client().goto(url)).expect("navigate");
    }

    /// Runs `script` in the page (its `arguments` are `args`) and returns
    /// what it returns.
    pub fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.run(self.client().execute(script, args))
            .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
    }

    /// Runs an asynchronous `script` (its last argument is the callback
    /// that ends it) and returns what it passed to the callback.
    pub fn js_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.run(self.client().execute_async(script, args))
            .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
    }

    /// Waits until the script returns a truthy value, and returns it.
    pub fn wait_for(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.js(script, vec![]);
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!(0)
                && value != json!("");
            if truthy {
                return value;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "UI-10: waited {PATIENCE:?} for {what}; page text:\n{}",
                self.text("body")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until an element matching `css` is displayed.
    pub fn wait_visible(&self, css: &str) {
        let script = format!(
            "const e = document.querySelector({}); return !!(e && e.offsetParent !== null && !e.closest('[hidden]'));",
            json!(css)
        );
        self.wait_for(&format!("{css} to be visible"), &script);
    }

    /// Whether an element matching `css` is displayed now.
    pub fn visible(&self, css: &str) -> bool {
        let script = format!(
            "const e = document.querySelector({}); return !!(e && e.offsetParent !== null && !e.closest('[hidden]'));",
            json!(css)
        );
        self.js(&script, vec![]) == json!(true)
    }

    /// Clicks the element matching `css`, first scrolled to the middle of
    /// the viewport as a person would (clear of the answer view's sticky
    /// bar, UI-17); found again if the page replaced it between finding
    /// and clicking.
    pub fn click(&self, css: &str) {
        let mut attempts = 0;
        loop {
            let clicked = self.run(async {
                let element = self.client().find(Locator::Css(css)).await?;
                self.client()
                    .execute(
                        "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'});",
                        vec![serde_json::to_value(&element)?],
                    )
                    .await?;
                element.click().await
            });
            match clicked {
                Ok(()) => return,
                Err(error) if attempts < 3 && error.to_string().contains("stale element") => {
                    attempts += 1;
                }
                Err(error) => panic!("click {css}: {error}"),
            }
        }
    }

    /// Types `text` into the element matching `css` (BMP characters only:
    /// chromedriver's limit).
    pub fn type_into(&self, css: &str, text: &str) {
        self.run(async {
            let element = self.client().find(Locator::Css(css)).await?;
            element.send_keys(text).await
        })
        .unwrap_or_else(|error| panic!("type into {css}: {error}"));
    }

    /// The rendered text of the first element matching `css` ("" if none).
    pub fn text(&self, css: &str) -> String {
        let script = format!(
            "const e = document.querySelector({}); return e ? e.innerText : '';",
            json!(css)
        );
        self.js(&script, vec![])
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Presses keys as a person would, on whatever has focus: each char
    /// down and up in turn.
    pub fn press(&self, keys: &str) {
        let mut actions = KeyActions::new("keyboard".into());
        for key in keys.chars() {
            actions = actions
                .then(KeyAction::Down { value: key })
                .then(KeyAction::Up { value: key });
        }
        self.run(self.client().perform_actions(actions))
            .expect("press keys");
    }

    /// Holds `modifier` while pressing `key` (e.g. Control + Enter).
    pub fn chord(&self, modifier: char, key: char) {
        let actions = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: modifier })
            .then(KeyAction::Down { value: key })
            .then(KeyAction::Up { value: key })
            .then(KeyAction::Up { value: modifier });
        self.run(self.client().perform_actions(actions))
            .expect("press a chord");
    }

    /// Opens a new tab, switches to it (the page's own tab goes to the
    /// background, hidden) and returns the page's tab to switch back to.
    pub fn hide_in_new_tab(&self, url: &str) -> fantoccini::wd::WindowHandle {
        self.run(async {
            let page = self.client().window().await?;
            let tab = self.client().new_window(true).await?;
            self.client().switch_to_window(tab.handle).await?;
            self.client().goto(url).await?;
            Ok::<_, fantoccini::error::CmdError>(page)
        })
        .expect("open a tab in front of the page")
    }

    /// Closes the current tab and switches to `page`.
    pub fn back_to(&self, page: fantoccini::wd::WindowHandle) {
        self.run(async {
            self.client().close_window().await?;
            self.client().switch_to_window(page).await
        })
        .expect("back to the page's tab");
    }

    pub fn set_window_size(&self, width: u32, height: u32) {
        self.run(self.client().set_window_size(width, height))
            .expect("resize the window");
    }

    /// Writes a PNG of the page to `target/ui-screenshots/<name>.png` for
    /// people to look at (UI-10), and returns its path.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.run(self.client().screenshot()).expect("screenshot");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots");
        std::fs::create_dir_all(&dir).expect("the screenshot folder");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }
}
