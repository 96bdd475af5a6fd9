package a

var table = map[string]string{"windows": "only"}
