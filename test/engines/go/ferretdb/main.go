// Command ferretdb-test-engine runs FerretDB v1 (MongoDB wire protocol) on a SQLite
// directory, for the content gateway's tests. It embeds FerretDB's embeddable
// package (github.com/FerretDB/FerretDB/ferretdb): a plain `go install` of
// FerretDB's own command panics on its missing generated version file.
//
//	ferretdb-test-engine -listen-addr 127.0.0.1:27017 -sqlite-dir /tmp/x/data
//
// It stops on SIGINT/SIGTERM, and when its standard input reaches end of file
// (the harness that started it is gone).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteDir := flag.String("sqlite-dir", "", "directory for SQLite databases (created if missing)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	watchStdin := flag.Bool("watch-stdin", true, "exit when standard input is closed")
	flag.Parse()

	if *sqliteDir == "" {
		fmt.Fprintln(os.Stderr, "-sqlite-dir is required")
		os.Exit(2)
	}
	dir, err := filepath.Abs(*sqliteDir)
	if err != nil {
		fail(err)
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}

	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		fail(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			logger.Warn("standard input closed: shutting down")
			stop()
		}()
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		fail(err)
	}

	fmt.Printf("FerretDB ready on %s\n", f.MongoDBURI())
	if err = f.Run(ctx); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ferretdb-test-engine:", err)
	os.Exit(1)
}
