"""The learner's side: the workspace folder (`folder`), its progress file (`state`) and the one
owner of what progress means (`progress`)."""
