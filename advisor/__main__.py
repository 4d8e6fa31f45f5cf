from advisor.cli import main

raise SystemExit(main())
